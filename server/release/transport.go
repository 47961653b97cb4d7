package release

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"time"
)

// fetchTimeout bounds one download (an index or a chart). The real
// repository's index is a few megabytes; a chart a few hundred kilobytes.
const fetchTimeout = 2 * time.Minute

// httpClient is the client for a repository or registry: the system's
// roots plus the configured CA file, proxies from the environment.
func httpClient(src Source) (*http.Client, error) {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	if src.CAFile != "" {
		pem, err := os.ReadFile(src.CAFile)
		if err != nil {
			return nil, fmt.Errorf("chart.caFile %s: %w", src.CAFile, err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("chart.caFile %s: no PEM certificate in it", src.CAFile)
		}
		transport.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return &http.Client{Transport: transport, Timeout: fetchTimeout}, nil
}
