package clusters

import (
	"context"
	"errors"
	"testing"

	"github.com/magnum-capi/magnum-capi/server/kube"
	"github.com/magnum-capi/magnum-capi/server/openstack"
)

// What a delete of the created testSpec writes, sorted.
var deleteWrites = []string{
	"annotate cluster " + testNamespace + "/" + testStackID + " " + kube.DeleteRequestedAnnotation,
	"delete server group " + testStackID + "-control-plane",
	"delete server group " + testStackID + "-default-worker",
	"ensure namespace " + testNamespace,
	"uninstall " + testNamespace + "/" + testStackID,
}

func TestDelete(t *testing.T) {
	tests := []struct {
		name   string
		caller Caller
		// created: the cluster was created first; arrange then breaks the
		// bed or the request.
		created   bool
		arrange   func(b *bed, spec *Spec)
		wantClass string
		wantIn    string
		want      []string
	}{
		{name: "a created cluster: release uninstalled, server groups deleted, credential kept", caller: projectCaller, created: true,
			wantClass: "OK", want: deleteWrites},
		{name: "the release already gone: succeeds again", caller: projectCaller, created: true,
			arrange:   func(b *bed, _ *Spec) { delete(b.releases.releases, testNamespace+"/"+testStackID) },
			wantClass: "OK", want: deleteWrites},
		{name: "nothing was ever made: succeeds, nothing left to delete in OpenStack", caller: projectCaller,
			wantClass: "OK", want: withoutWrites(deleteWrites, "delete server group")},
		{name: "a create that never returned its stack_id: deleted under the name it would have got", caller: projectCaller, created: true,
			arrange: func(_ *bed, spec *Spec) { spec.Cluster.StackID = "" }, wantClass: "OK", want: deleteWrites},
		{name: "an orphaned credential of the caller's: swept", caller: projectCaller, created: true,
			arrange: func(b *bed, _ *Spec) {
				b.openstack.credentials["cred-9"] = openstack.CredentialRef{ID: "cred-9", Name: "magnum-" + testSpec().Cluster.UUID + "-9"}
			},
			wantClass: "OK", want: append([]string{"delete credential cred-9"}, deleteWrites...)},
		{name: "a cloud admin of another project: acts as the cluster's credential", caller: adminCaller, created: true,
			wantClass: "OK", want: deleteWrites},
		{name: "a cloud admin, no credential stored: release uninstalled, server groups left", caller: adminCaller, created: true,
			arrange: func(b *bed, _ *Spec) {
				delete(b.kube.secrets, testNamespace+"/"+credentialSecretName(testStackID))
			},
			wantClass: "OK", want: withoutWrites(deleteWrites, "delete server group")},
		{name: "the Lease held by another operation: Aborted, nothing uninstalled", caller: projectCaller, created: true,
			arrange:   func(b *bed, _ *Spec) { b.leaseHeld() },
			wantClass: "Aborted", wantIn: "another operation on this cluster is in progress",
			want: []string{"ensure namespace " + testNamespace}},
		{name: "Helm cannot uninstall: the error, server groups kept for the retry", caller: projectCaller, created: true,
			arrange: func(b *bed, _ *Spec) {
				b.releases.fail = failures{"Uninstall": errors.New("uninstalling release: the server is currently unable to handle the request")}
			},
			wantClass: "", wantIn: "unable to handle the request",
			want: []string{"ensure namespace " + testNamespace}},
		{name: "Nova down: Unavailable naming it after the release is gone", caller: projectCaller, created: true,
			arrange: func(b *bed, _ *Spec) {
				b.openstack.fail = failures{"DeleteServerGroups": &openstack.UnavailableError{Service: "compute", Op: "deleting server groups", Detail: "503"}}
			},
			wantClass: "Unavailable", wantIn: "OpenStack compute service unavailable",
			want: withoutWrites(deleteWrites, "delete server group")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, spec := newBed(t), createdSpec()
			if tt.created {
				b.deployed(t, testSpec())
			}
			if tt.arrange != nil {
				tt.arrange(b, &spec)
			}
			err := b.s.Delete(context.Background(), tt.caller, spec)
			assertOutcome(t, err, tt.wantClass, tt.wantIn, b.writes(), tt.want)
		})
	}
}
