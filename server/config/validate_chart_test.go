package config

import (
	"strings"
	"testing"
	"time"
)

func TestValidateChartSource(t *testing.T) {
	tests := []struct {
		name  string
		chart Chart
		want  string // "" when valid; else a substring of the one problem
	}{
		{"https repository", Chart{Repository: "https://azimuth-cloud.github.io/capi-helm-charts"}, ""},
		{"https with basic auth", Chart{Repository: "https://charts.example/r", Username: "u", Password: "p"}, ""},
		{"oci plain http", Chart{Repository: "oci://127.0.0.1:5000/charts", PlainHTTP: true}, ""},
		{"local directory", Chart{Repository: "/srv/charts"}, ""},
		{"no host", Chart{Repository: "https:///path"}, "chart.repository"},
		{"credentials in URL", Chart{Repository: "https://u:secret@charts.example/r"}, "chart.username and chart.password, not in the URL"},
		{"username without password", Chart{Repository: "https://charts.example/r", Username: "u"}, "set together"},
		{"plainHTTP on https", Chart{Repository: "https://charts.example/r", PlainHTTP: true}, "only applies to an oci://"},
		{"CA for a local path", Chart{Repository: "/srv/charts", CAFile: "/etc/ca.pem"}, "not a local chart path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var problems []string
			Config{Chart: tt.chart}.validateChartSource(func(option, value, problem string) {
				problems = append(problems, (&OptionError{Option: option, Value: value, Problem: problem}).Error())
			})
			switch {
			case tt.want == "" && len(problems) > 0:
				t.Errorf("problems %v, want none", problems)
			case tt.want != "" && (len(problems) != 1 || !strings.Contains(problems[0], tt.want)):
				t.Errorf("problems %v, want one containing %q", problems, tt.want)
			}
			for _, p := range problems {
				if strings.Contains(p, "secret") {
					t.Errorf("a problem quotes the password: %s", p)
				}
			}
		})
	}
}

func TestIndexTTLMustBePositive(t *testing.T) {
	for _, ttl := range []time.Duration{0, -time.Minute} {
		c := Config{Chart: Chart{IndexTTL: ttl}}
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "chart.indexTTL") {
			t.Errorf("indexTTL %s: error %v, want one naming chart.indexTTL", ttl, err)
		}
	}
}
