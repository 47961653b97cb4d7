package release

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/storage/driver"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// TestHistoryReadsEndWithTheCaller: Helm's Secrets driver sends every
// request with context.Background(); through historyReads its reads of the
// history end with the caller's context, so a hung API server cannot hold
// an operation past its deadline (test/e2e TestReliabilityAPIServerHung).
// The API server here accepts each request and never answers it.
func TestHistoryReadsEndWithTheCaller(t *testing.T) {
	stop := make(chan struct{})
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	defer hung.Close()
	defer close(stop)
	clients, err := kubernetes.NewForConfig(&rest.Config{Host: hung.URL, Timeout: 15 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	reads := []struct {
		name string
		read func(*driver.Secrets) error
	}{
		{"history", func(d *driver.Secrets) error {
			_, err := d.Query(map[string]string{"name": "demo", "owner": "helm"})
			return err
		}},
		{"one record", func(d *driver.Secrets) error { _, err := d.Get("sh.helm.release.v1.demo.v1"); return err }},
	}
	for _, tt := range reads {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			d := driver.NewSecrets(&historyReads{SecretInterface: clients.CoreV1().Secrets("ns"), History: new(History), reads: ctx})
			start := time.Now()
			err := tt.read(d)
			if took := time.Since(start); took > 10*time.Second {
				t.Fatalf("the read ended after %s, not with the caller's 200 ms deadline", took)
			}
			if err == nil || errors.Is(err, driver.ErrReleaseNotFound) {
				t.Fatalf("a read from a hung API server: %v, want the deadline's error", err)
			}
		})
	}
}
