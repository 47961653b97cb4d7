package clusters

import (
	"context"
	"errors"
	"maps"
	"slices"
	"testing"

	"github.com/magnum-capi/magnum-capi/server/openstack"
)

func TestRotateCredential(t *testing.T) {
	namespace := "ensure namespace " + testNamespace
	secret := "apply secret " + testNamespace + "/" + credentialSecretName(testStackID)
	tests := []struct {
		name      string
		caller    Caller
		arrange   func(b *bed)
		wantClass string
		wantIn    string
		want      []string
		// wantKeystone are the credentials left in Keystone, sorted.
		wantKeystone []string
	}{
		{name: "rotated: the new credential stored, the old one deleted", caller: projectCaller,
			wantClass: "OK", want: []string{"create credential cred-2", "delete credential cred-1", namespace, secret},
			wantKeystone: []string{"cred-2"}},
		{name: "retried after a crash left a credential unstored: it is swept", caller: projectCaller,
			arrange: func(b *bed) {
				b.openstack.credentials["cred-9"] = openstack.CredentialRef{ID: "cred-9", Name: "magnum-" + testSpec().Cluster.UUID + "-9"}
			},
			wantClass: "OK", want: []string{"create credential cred-2", "delete credential cred-1", "delete credential cred-9", namespace, secret},
			wantKeystone: []string{"cred-2"}},
		{name: "a cloud admin of another project: refused, nothing written", caller: adminCaller,
			wantClass: "FailedPrecondition", wantIn: "only a user of the cluster's own project", wantKeystone: []string{"cred-1"}},
		{name: "Keystone down: Unavailable naming it, the old credential kept", caller: projectCaller,
			arrange: func(b *bed) {
				b.openstack.fail = failures{"CreateCredential": &openstack.UnavailableError{Service: "identity", Op: "creating an application credential", Detail: "503"}}
			},
			wantClass: "Unavailable", wantIn: "OpenStack identity service unavailable", want: []string{namespace}, wantKeystone: []string{"cred-1"}},
		{name: "the Secret cannot be written: the new credential deleted at once", caller: projectCaller,
			arrange:   func(b *bed) { b.kube.fail = failures{"ApplySecret": errors.New("secrets is forbidden")} },
			wantClass: "", wantIn: "secrets is forbidden",
			want: []string{"create credential cred-2", "delete credential cred-2", namespace}, wantKeystone: []string{"cred-1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBed(t)
			b.deployed(t, testSpec())
			if tt.arrange != nil {
				tt.arrange(b)
			}
			err := b.s.RotateCredential(context.Background(), tt.caller, createdSpec())
			assertOutcome(t, err, tt.wantClass, tt.wantIn, b.writes(), tt.want)
			if got := slices.Sorted(maps.Keys(b.openstack.credentials)); !slices.Equal(got, tt.wantKeystone) {
				t.Errorf("Keystone holds %v, want %v", got, tt.wantKeystone)
			}
		})
	}
}
