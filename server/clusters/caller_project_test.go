package clusters

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/magnum-capi/magnum-capi/helmvalues"
)

func TestCallerInProjectOf(t *testing.T) {
	spec := Spec{Cluster: helmvalues.Cluster{ProjectID: "tenant"}}
	tests := []struct {
		name   string
		caller Caller
		want   bool
	}{
		{"a user of the cluster's project", Caller{AuthToken: "t", ProjectID: "tenant"}, true},
		{"a cloud admin of another project", Caller{AuthToken: "t", ProjectID: "admins", IsAdmin: true}, false},
		{"no token (nothing to act as)", Caller{ProjectID: "tenant"}, false},
		{"a token without a project", Caller{AuthToken: "t"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.caller.inProjectOf(spec); got != tt.want {
				t.Errorf("inProjectOf = %v, want %v", got, tt.want)
			}
		})
	}
}

// A credential rotation from another project is refused before anything is
// read or written (the Service has no dependencies here to touch), saying
// who can do it and naming no id.
func TestRotateCredentialFromAnotherProjectIsRefused(t *testing.T) {
	s := &Service{}
	spec := Spec{Cluster: helmvalues.Cluster{ProjectID: "tenant", UUID: "u", StackID: "k8s-abc"}}
	err := s.RotateCredential(context.Background(), Caller{AuthToken: "t", ProjectID: "admins", IsAdmin: true}, spec)
	var pe *PreconditionError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "only a user of the cluster's own project") || strings.Contains(err.Error(), "admins") {
		t.Fatalf("err = %v, want a precondition saying who can rotate it", err)
	}
}
