package release

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	helmrelease "helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
)

// TestHistoryReads: a query of a release's records is answered from the
// history read last, filtered by its labels; any query after a write, or by
// an action with a History of its own, goes to the API server (here
// client-go's fake clientset, which records what reaches it).
func TestHistoryReads(t *testing.T) {
	history := map[string]string{"name": "demo", "owner": "helm"}
	deployed := map[string]string{"name": "demo", "owner": "helm", "status": "deployed"}
	other := map[string]string{"name": "other", "owner": "helm"}
	tests := []struct {
		name string
		// steps are queries, "write" for a record's update, or the next
		// action of the operation: "next" shares the History, "alone" does
		// not.
		steps []any
		// want is, per query, the revisions it returns.
		want [][]int
		// listed is how many LISTs reached the server.
		listed int
	}{
		{"the same history twice", []any{history, history}, [][]int{{1, 2}, {1, 2}}, 1},
		{"the deployed revision from the history", []any{history, deployed}, [][]int{{1, 2}, {2}}, 1},
		{"the deployed revision first", []any{deployed, history}, [][]int{{2}, {1, 2}}, 1},
		{"after a write the server again", []any{history, "write", history}, [][]int{{1, 2}, {1, 2}}, 2},
		{"an operation's next action reads from its first", []any{history, "next", history}, [][]int{{1, 2}, {1, 2}}, 1},
		{"an action that wrote makes the next one read", []any{history, "write", "next", history}, [][]int{{1, 2}, {1, 2}}, 2},
		{"an action with a History of its own reads", []any{history, "alone", history}, [][]int{{1, 2}, {1, 2}}, 2},
		{"another release is read for itself", []any{history, other}, [][]int{{1, 2}, nil}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clients := fake.NewClientset()
			secrets := clients.CoreV1().Secrets("ns")
			seed := driver.NewSecrets(secrets)
			for v, status := range []helmrelease.Status{helmrelease.StatusSuperseded, helmrelease.StatusDeployed} {
				rel := &helmrelease.Release{Name: "demo", Namespace: "ns", Version: v + 1, Info: &helmrelease.Info{Status: status}}
				if err := seed.Create(fmt.Sprintf("sh.helm.release.v1.demo.v%d", rel.Version), rel); err != nil {
					t.Fatal(err)
				}
			}
			clients.ClearActions()
			r := newRecords(secrets, context.Background(), Target{}, nil)
			var got [][]int
			for _, step := range tt.steps {
				switch step {
				case "next":
					r = newRecords(secrets, context.Background(), Target{History: r.history}, nil)
					continue
				case "alone":
					r = newRecords(secrets, context.Background(), Target{}, nil)
					continue
				case "write":
					rel := &helmrelease.Release{Name: "demo", Namespace: "ns", Version: 2, Info: &helmrelease.Info{Status: helmrelease.StatusDeployed}}
					if err := r.Update("sh.helm.release.v1.demo.v2", rel); err != nil {
						t.Fatal(err)
					}
					continue
				}
				rels, err := r.Query(step.(map[string]string))
				if err != nil && !errors.Is(err, driver.ErrReleaseNotFound) {
					t.Fatal(err)
				}
				var versions []int
				for _, rel := range rels {
					versions = append(versions, rel.Version)
				}
				slices.Sort(versions)
				got = append(got, versions)
			}
			if !slices.EqualFunc(got, tt.want, slices.Equal) {
				t.Errorf("answers %v, want %v", got, tt.want)
			}
			listed := 0
			for _, a := range clients.Actions() {
				if a.GetVerb() == "list" {
					listed++
				}
			}
			if listed != tt.listed {
				t.Errorf("%d LISTs reached the server, want %d", listed, tt.listed)
			}
		})
	}
}

// TestHistoryAnswersAreCopies: an action that changes a record it read
// (an upgrade marks the previous revision superseded) does not change what
// the next query is answered with.
func TestHistoryAnswersAreCopies(t *testing.T) {
	clients := fake.NewClientset()
	secrets := clients.CoreV1().Secrets("ns")
	seed := driver.NewSecrets(secrets)
	if err := seed.Create("sh.helm.release.v1.demo.v1", &helmrelease.Release{Name: "demo", Version: 1, Info: &helmrelease.Info{Status: helmrelease.StatusDeployed}}); err != nil {
		t.Fatal(err)
	}
	r := newRecords(secrets, context.Background(), Target{}, nil)
	query := map[string]string{"name": "demo", "owner": "helm", "status": "deployed"}
	first, err := r.Query(query)
	if err != nil {
		t.Fatal(err)
	}
	first[0].Info.Status = helmrelease.StatusSuperseded
	first[0].Labels["status"] = "superseded"
	again, err := r.Query(query)
	if err != nil {
		t.Fatalf("the deployed revision again: %v", err)
	}
	if again[0].Info.Status != helmrelease.StatusDeployed {
		t.Errorf("the second answer says %s, want deployed", again[0].Info.Status)
	}
}

// TestHistoryReadsEndWithTheCaller: Helm's Secrets driver sends every
// request with context.Background(); through records its reads end with
// the caller's context, so a hung API server cannot hold an operation past
// its deadline (test/e2e TestReliabilityAPIServerHung). The API server here
// accepts each request and never answers it.
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
		read func(records) error
	}{
		{"history", func(d records) error {
			_, err := d.Query(map[string]string{"name": "demo", "owner": "helm"})
			return err
		}},
		{"one record", func(d records) error { _, err := d.Get("sh.helm.release.v1.demo.v1"); return err }},
	}
	for _, tt := range reads {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			d := newRecords(clients.CoreV1().Secrets("ns"), ctx, Target{}, nil)
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
