package release

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"

	helmkube "helm.sh/helm/v3/pkg/kube"
	"helm.sh/helm/v3/pkg/registry"
	helmrelease "helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	"k8s.io/cli-runtime/pkg/resource"

	"github.com/magnum-capi/magnum-capi/server/panics"
)

// panicky is an HTTP transport with a bug: every request panics in the
// goroutine that sends it.
type panicky struct{}

func (panicky) RoundTrip(*http.Request) (*http.Response, error) { panic("a bug in the transport") }

// TestGoroutinesRecover: a panic in a goroutine the adapter starts or a
// method of ours Helm calls from its own (a release record's write, one
// object's write among several, an OCI pull)
// fails that call alone as a panics.Error, counted where it happened; the
// same place then works for the next call.
func TestGoroutinesRecover(t *testing.T) {
	list := helmkube.ResourceList{{Name: "a"}, {Name: "b"}, {Name: "c"}}
	tests := []struct {
		name  string
		where string
		// run calls the place; with bug, the goroutine it starts panics.
		run func(ctx context.Context, bug bool) error
	}{
		{"Helm's goroutine writing a release record", "release/records", func(_ context.Context, bug bool) error {
			r := records{Driver: driver.NewMemory(), history: new(History), ready: func() error {
				if bug {
					panic("a bug in the caller's preparation")
				}
				return nil
			}}
			return r.Create("sh.helm.release.v1.demo.v1", &helmrelease.Release{Name: "demo", Version: 1, Info: &helmrelease.Info{}})
		}},
		{"one object's write among several", "release/write", func(_ context.Context, bug bool) error {
			var wrote atomic.Int32
			_, err := eachObject(list, func(info *resource.Info) (*helmkube.Result, error) {
				if bug && info.Name == "b" {
					panic("a bug in one write")
				}
				wrote.Add(1)
				return &helmkube.Result{Created: helmkube.ResourceList{info}}, nil
			})
			if want := int32(len(list)); !bug && wrote.Load() != want || bug && wrote.Load() != want-1 {
				t.Errorf("%d objects written, want every one but the one that panicked", wrote.Load())
			}
			return err
		}},
		{"Helm's goroutine calling our kube client", kubeClientWhere, func(_ context.Context, bug bool) error {
			if !bug {
				_, err := concurrentWrites{}.Update(nil, nil, false) // nothing to write
				return err
			}
			_, err := concurrentWrites{}.Create(helmkube.ResourceList{{Name: "no object: a nil pointer"}})
			return err
		}},
		{"an OCI pull", "release/ociPull", func(ctx context.Context, bug bool) error {
			if !bug {
				return nil // no registry here: the pull's own error is another test's
			}
			client, err := registry.NewClient(registry.ClientOptHTTPClient(&http.Client{Transport: panicky{}}))
			if err != nil {
				t.Fatal(err)
			}
			r := &ociRepo{src: Source{Repository: "oci://registry.example/charts", Name: "openstack-cluster"},
				ref: "registry.example/charts/openstack-cluster", client: client, cache: diskCache{dir: t.TempDir()}}
			_, _, err = r.fetch(ctx, "0.1.0")
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := panics.Count(tt.where)
			err := tt.run(t.Context(), true)
			var pe *panics.Error
			if !errors.As(err, &pe) || pe.Where != tt.where {
				t.Fatalf("got %v, want a panics.Error at %s", err, tt.where)
			}
			if got := panics.Count(tt.where); got != before+1 {
				t.Errorf("counted %v panics at %s, want %v", got, tt.where, before+1)
			}
			if err := tt.run(t.Context(), false); err != nil {
				t.Errorf("the next call: %v", err)
			}
		})
	}
}
