package config

import (
	"net/url"
	"strings"
)

// validateChartSource checks the chart source options beyond presence: a
// repository URL that parses, and credentials that come in pairs.
func (c Config) validateChartSource(bad func(option, value, problem string)) {
	repo := c.Chart.Repository
	remote := strings.HasPrefix(repo, "http://") || strings.HasPrefix(repo, "https://") || strings.HasPrefix(repo, "oci://")
	if remote {
		u, err := url.Parse(repo)
		if err != nil || u.Host == "" {
			bad("chart.repository", repo, "expected https://host/path, oci://host/path or a local chart path")
		} else if u.User != nil {
			// Credentials in the URL would end up in logs and errors.
			bad("chart.repository", u.Redacted(), "put credentials in chart.username and chart.password, not in the URL")
		}
	}
	if (c.Chart.Username == "") != (c.Chart.Password == "") {
		bad("chart.username", c.Chart.Username, "chart.username and chart.password are set together")
	}
	if c.Chart.PlainHTTP && !strings.HasPrefix(repo, "oci://") {
		bad("chart.plainHTTP", "true", "only applies to an oci:// registry (an http:// repository is plain HTTP already)")
	}
	if !remote && (c.Chart.Username != "" || c.Chart.CAFile != "") {
		bad("chart.repository", repo, "chart.username, chart.password and chart.caFile apply to a repository or registry, not a local chart path")
	}
}
