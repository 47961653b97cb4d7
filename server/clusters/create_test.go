package clusters

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/magnum-capi/magnum-capi/certs"
	"github.com/magnum-capi/magnum-capi/helmvalues"
	"github.com/magnum-capi/magnum-capi/server/openstack"
	"github.com/magnum-capi/magnum-capi/server/release"
)

// What a create of testSpec by a user of its project writes, in order of
// the names (the credential and CA Secrets are written side by side).
var createWrites = []string{
	"apply secret " + testNamespace + "/" + testStackID + "-ca",
	"apply secret " + testNamespace + "/" + testStackID + "-cloud-credentials",
	"apply secret " + testNamespace + "/" + testStackID + "-etcd",
	"apply secret " + testNamespace + "/" + testStackID + "-proxy",
	"apply secret " + testNamespace + "/" + testStackID + "-sa",
	"create credential cred-1",
	"create server group " + testStackID + "-control-plane",
	"create server group " + testStackID + "-default-worker",
	"deploy " + testNamespace + "/" + testStackID + " " + helmvalues.ChartVersion,
	"ensure namespace " + testNamespace,
}

func TestCreate(t *testing.T) {
	keystoneDown := &openstack.UnavailableError{Service: "identity", Op: "creating an application credential", Detail: "503 Service Unavailable"}
	glanceDown := &openstack.UnavailableError{Service: "image", Op: "finding image", Detail: "connection refused"}
	tests := []struct {
		name   string
		caller Caller
		// arrange breaks the bed or the request.
		arrange   func(b *bed, spec *Spec, cas *certs.Authorities)
		wantClass string
		wantIn    string   // part of the error's text
		want      []string // the writes, sorted
	}{
		{name: "a user of the project: credential, CA Secrets, release", caller: projectCaller,
			wantClass: "OK", want: createWrites},
		{name: "an invalid label: refused, nothing written", caller: projectCaller,
			arrange: func(_ *bed, spec *Spec, _ *certs.Authorities) {
				spec.Cluster.Labels = map[string]string{"boot_volume_size": "big"}
			},
			wantClass: "InvalidArgument", wantIn: "labels.boot_volume_size"},
		{name: "CA material that is not a CA: refused, nothing written", caller: projectCaller,
			arrange:   func(_ *bed, _ *Spec, cas *certs.Authorities) { cas.EtcdCA = cas.ServiceAccount },
			wantClass: "InvalidArgument", wantIn: "certificates.etcd_ca"},
		{name: "Glance down while rendering: Unavailable naming it, nothing written", caller: projectCaller,
			arrange:   func(b *bed, _ *Spec, _ *certs.Authorities) { b.openstack.fail = failures{"Facts": glanceDown} },
			wantClass: "Unavailable", wantIn: "OpenStack image service unavailable"},
		{name: "chart version not in the repository: refused, nothing written", caller: projectCaller,
			arrange: func(b *bed, _ *Spec, _ *certs.Authorities) {
				b.charts.fail = &release.ChartNotFoundError{Name: "openstack-cluster", Version: "0.0.0", Err: errors.New("404")}
			},
			wantClass: "FailedPrecondition", wantIn: "openstack-cluster"},
		{name: "the Lease held by another operation: Aborted, nothing written but the namespace", caller: projectCaller,
			arrange:   func(b *bed, _ *Spec, _ *certs.Authorities) { b.leaseHeld() },
			wantClass: "Aborted", wantIn: "another operation on this cluster is in progress",
			want: []string{"ensure namespace " + testNamespace}},
		{name: "Keystone down: Unavailable naming it, no credential and no release", caller: projectCaller,
			arrange: func(b *bed, _ *Spec, _ *certs.Authorities) {
				b.openstack.fail = failures{"CreateCredential": keystoneDown}
			},
			wantClass: "Unavailable", wantIn: "OpenStack identity service unavailable",
			want: withoutWrites(createWrites, "cloud-credentials", "create credential", "deploy")},
		{name: "a cloud admin of another project: refused before anything is written", caller: adminCaller,
			wantClass: "FailedPrecondition", wantIn: "no application credential"},
		{name: "a free floating IP of the project: created", caller: projectCaller,
			arrange: func(b *bed, spec *Spec, _ *certs.Authorities) {
				b.openstack.floatingIPs = map[string]openstack.FloatingIP{"203.0.113.10": {ID: "f1", Address: "203.0.113.10"}}
				spec.Cluster.Labels = map[string]string{"api_server_floating_ip": "203.0.113.10"}
			},
			wantClass: "OK", want: createWrites},
		{name: "a floating IP the project has not: refused, nothing written", caller: projectCaller,
			arrange: func(_ *bed, spec *Spec, _ *certs.Authorities) {
				spec.Cluster.Labels = map[string]string{"api_server_floating_ip": "203.0.113.10"}
			},
			wantClass: "InvalidArgument", wantIn: `labels.api_server_floating_ip: invalid value "203.0.113.10"`},
		{name: "a floating IP attached to a server: refused, nothing written", caller: projectCaller,
			arrange: func(b *bed, spec *Spec, _ *certs.Authorities) {
				b.openstack.floatingIPs = map[string]openstack.FloatingIP{"203.0.113.10": {ID: "f1", PortID: "p1", PortOwner: "compute:nova"}}
				spec.Cluster.Labels = map[string]string{"api_server_floating_ip": "203.0.113.10"}
			},
			wantClass: "InvalidArgument", wantIn: "attached to port p1 (compute:nova)"},
		{name: "Neutron down while checking the floating IP: Unavailable naming it, nothing written", caller: projectCaller,
			arrange: func(b *bed, spec *Spec, _ *certs.Authorities) {
				b.openstack.fail = failures{"FindFloatingIP": &openstack.UnavailableError{Service: "network",
					Op: "look up floating IP 203.0.113.10 in Neutron", Detail: "HTTP 503"}}
				spec.Cluster.Labels = map[string]string{"api_server_floating_ip": "203.0.113.10"}
			},
			wantClass: "Unavailable", wantIn: "in Neutron"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, spec, cas := newBed(t), testSpec(), testAuthorities(t)
			if tt.arrange != nil {
				tt.arrange(b, &spec, &cas)
			}
			_, err := b.s.Create(context.Background(), tt.caller, spec, cas)
			assertOutcome(t, err, tt.wantClass, tt.wantIn, b.writes(), tt.want)
		})
	}
}

// TestCreateRetried: a create retried after it failed part way, or after
// it succeeded (Magnum lost the answer), converges on the same cluster: the
// same name, the credential the first attempt stored, one more release
// revision.
func TestCreateRetried(t *testing.T) {
	tests := []struct {
		name  string
		first func(b *bed) // breaks the first attempt
		// wantRevision is the release's revision after the retry.
		wantRevision int
	}{
		{name: "after Helm failed: the credential is kept, the release installed",
			first: func(b *bed) { b.releases.fail = failures{"Deploy": errors.New("the API server went away")} }, wantRevision: 1},
		{name: "after a create that succeeded: the release upgraded", first: func(*bed) {}, wantRevision: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, ctx := newBed(t), context.Background()
			tt.first(b)
			first, _ := b.s.Create(ctx, projectCaller, testSpec(), testAuthorities(t))
			b.releases.fail = nil
			id, err := b.s.Create(ctx, projectCaller, testSpec(), testAuthorities(t))
			if err != nil {
				t.Fatalf("retried create: %v", err)
			}
			rel := b.releases.releases[testNamespace+"/"+id]
			got := []any{id, len(b.openstack.credentials), rel != nil && rel.Revision == tt.wantRevision}
			if first != "" && first != id {
				t.Errorf("the retry named the cluster %s, the first attempt %s", id, first)
			}
			if want := []any{testStackID, 1, true}; !slices.Equal(got, want) {
				t.Errorf("stack id, credentials in Keystone, release at revision %d = %v, want %v", tt.wantRevision, got, want)
			}
		})
	}
}

// withoutWrites is writes without those containing any of parts.
func withoutWrites(writes []string, parts ...string) []string {
	return slices.DeleteFunc(slices.Clone(writes), func(w string) bool {
		return slices.ContainsFunc(parts, func(p string) bool { return strings.Contains(w, p) })
	})
}

// assertOutcome checks the operation's error class and text, and the
// writes the fakes recorded against want, both sorted.
func assertOutcome(t *testing.T, err error, wantClass, wantIn string, writes, want []string) {
	t.Helper()
	if got := class(err); got != wantClass {
		t.Fatalf("error %v: class %q, want %q", err, got, wantClass)
	}
	if err != nil && !strings.Contains(err.Error(), wantIn) {
		t.Errorf("error %q does not say %q", err, wantIn)
	}
	slices.Sort(writes)
	want = slices.Sorted(slices.Values(want))
	if !slices.Equal(writes, want) {
		t.Errorf("wrote\n  %s\nwant\n  %s", strings.Join(writes, "\n  "), strings.Join(want, "\n  "))
	}
}
