package chartrepo

import (
	"crypto/x509"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/action"
)

// TestHTTPLocateChart fetches charts by repository URL and version with the
// Helm SDK, over plain HTTP, TLS, and TLS with basic auth.
func TestHTTPLocateChart(t *testing.T) {
	for _, tc := range []struct {
		name    string
		options HTTPOptions
	}{
		{"plain HTTP", HTTPOptions{}},
		{"TLS", HTTPOptions{TLS: true}},
		{"TLS and basic auth", HTTPOptions{TLS: true, Username: "magnum", Password: "s3cret"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := tc.options
			opts.Charts = testCharts()
			repo, err := StartHTTP(opts)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = repo.Close() })
			wantScheme := map[bool]string{false: "http://127.0.0.1:", true: "https://127.0.0.1:"}[opts.TLS]
			if !strings.HasPrefix(repo.URL(), wantScheme) {
				t.Errorf("URL %q, want %s...", repo.URL(), wantScheme)
			}
			if opts.TLS {
				if pool := x509.NewCertPool(); !pool.AppendCertsFromPEM(repo.CAPEM()) {
					t.Errorf("CAPEM is not a PEM certificate: %q", repo.CAPEM())
				}
			} else if repo.CAPEM() != nil || repo.CAFile() != "" {
				t.Error("a plain HTTP repository has a CA")
			}

			for _, version := range []string{"0.27.0", "0.27.1"} {
				ch, err := locateHTTP(t, action.ChartPathOptions{
					RepoURL: repo.URL(), Version: version, CaFile: repo.CAFile(),
					Username: opts.Username, Password: opts.Password,
				}, "openstack-cluster")
				if err != nil {
					t.Fatalf("locating openstack-cluster %s: %v", version, err)
				}
				if ch.Name() != "openstack-cluster" || ch.Metadata.Version != version {
					t.Errorf("got chart %s %s, want openstack-cluster %s", ch.Name(), ch.Metadata.Version, version)
				}
				if len(ch.Dependencies()) != 1 || ch.Dependencies()[0].Name() != "cluster-addons" {
					t.Errorf("the packaged chart lost its addons subchart: %v", ch.Dependencies())
				}
				if got := repo.Requests("/openstack-cluster-" + version + ".tgz"); got != 1 {
					t.Errorf("%s fetched %d times, want 1", version, got)
				}
			}
			if got := repo.Requests("/index.yaml"); got < 2 {
				t.Errorf("index.yaml fetched %d times, want one per locate", got)
			}
		})
	}
}

// TestHTTPRefuses checks a client without the CA or the password gets nothing.
func TestHTTPRefuses(t *testing.T) {
	repo, err := StartHTTP(HTTPOptions{Charts: testCharts(), TLS: true, Username: "magnum", Password: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = repo.Close() })
	for _, tc := range []struct {
		name    string
		options action.ChartPathOptions
		want    string
	}{
		{"unknown CA", action.ChartPathOptions{Username: "magnum", Password: "s3cret"}, "certificate"},
		{"wrong password", action.ChartPathOptions{CaFile: repo.CAFile(), Username: "magnum", Password: "wrong"}, "401"},
		{"no credentials", action.ChartPathOptions{CaFile: repo.CAFile()}, "401"},
		{"missing version", action.ChartPathOptions{CaFile: repo.CAFile(), Username: "magnum", Password: "s3cret", Version: "9.9.9"}, "9.9.9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			options := tc.options
			options.RepoURL = repo.URL()
			if options.Version == "" {
				options.Version = "0.27.0"
			}
			_, err := locateHTTP(t, options, "openstack-cluster")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one mentioning %q", err, tc.want)
			}
		})
	}
	if got := repo.Requests("/openstack-cluster-0.27.0.tgz"); got != 0 {
		t.Errorf("the chart was served %d times to refused clients", got)
	}
}

// TestHTTPOfflineAndPublish takes the repository down and back up on the
// same URL, and publishes a version after start.
func TestHTTPOfflineAndPublish(t *testing.T) {
	repo, err := StartHTTP(HTTPOptions{Charts: testCharts()[:1]})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = repo.Close() })
	options := action.ChartPathOptions{RepoURL: repo.URL(), Version: "0.27.0"}
	if _, err := locateHTTP(t, options, "openstack-cluster"); err != nil {
		t.Fatal(err)
	}

	if err := repo.SetOnline(false); err != nil {
		t.Fatal(err)
	}
	if _, err := locateHTTP(t, options, "openstack-cluster"); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("offline repository: error %v, want connection refused", err)
	}
	if got := repo.Requests("/index.yaml"); got != 1 {
		t.Errorf("index.yaml requests %d while offline, want the 1 from before", got)
	}

	if err := repo.SetOnline(true); err != nil {
		t.Fatal(err)
	}
	if err := repo.Publish(Chart{Dir: testCharts()[0].Dir, Version: "0.28.0"}); err != nil {
		t.Fatal(err)
	}
	for _, version := range []string{"0.27.0", "0.28.0"} {
		options.Version = version
		ch, err := locateHTTP(t, options, "openstack-cluster")
		if err != nil {
			t.Fatalf("back online, %s: %v", version, err)
		}
		if ch.Metadata.Version != version {
			t.Errorf("got %s, want %s", ch.Metadata.Version, version)
		}
	}
	if got := repo.RequestCounts(); got["/index.yaml"] != 3 || got["/openstack-cluster-0.27.0.tgz"] != 2 || got["/openstack-cluster-0.28.0.tgz"] != 1 {
		t.Errorf("request counts %v", got)
	}
}
