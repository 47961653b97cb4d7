package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/magnum-capi/magnum-capi/certs/certstest"
	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
	"github.com/magnum-capi/magnum-capi/server"
	"github.com/magnum-capi/magnum-capi/test/harness"
)

// shortCall is the deadline of calls meant to run out of time at a hung
// step: the sidecar answers a quarter of it early (server/interceptors.go).
const shortCall = 12 * time.Second

// TestCARotationAtomic: whichever step of a CA rotation fails, or whichever
// step the call's deadline passes at, the CA the management cluster's
// Secrets hold is the one Magnum keeps. Magnum keeps the new certificates
// when the call succeeds or its answer says the change was applied (the
// AppliedTrailer), and the old ones otherwise (the shim's
// rotate_ca_certificate). The steps: reading the deployed release (what the
// server-group step reads; a rotation asks Nova nothing for groups the
// release has), writing the CA Secrets, deleting the kubeconfig, and Helm's
// writes of the release. Failed after Helm wrote the release (applied), the
// rotation is finished by a resize, as Magnum allows from UPDATE_FAILED.
func TestCARotationAtomic(t *testing.T) {
	t.Parallel() // with the other parallel tests, after the sequential ones
	secret := func(stackID, suffix string) string { return "/secrets/" + stackID + suffix }
	tests := []struct {
		name      string
		fault     func(stackID string) *fault
		deadline  time.Duration
		wantOK    bool // the call succeeds
		wantNewCA bool // the management cluster (and so Magnum) ends on the new CA
	}{
		{"release read fails", func(id string) *fault { return newFault("GET", "owner%3Dhelm", false) }, 45 * time.Second, false, false},
		{"release read past the deadline", func(id string) *fault { return newFault("GET", "owner%3Dhelm", true) }, shortCall, false, false},
		{"CA Secret write fails", func(id string) *fault { return newFault("PATCH", secret(id, "-etcd"), false) }, 45 * time.Second, false, false},
		{"CA Secret write past the deadline", func(id string) *fault { return newFault("PATCH", secret(id, "-etcd"), true) }, shortCall, false, false},
		{"kubeconfig delete fails", func(id string) *fault { return newFault("DELETE", secret(id, "-kubeconfig"), false) }, 45 * time.Second, false, false},
		{"kubeconfig delete past the deadline", func(id string) *fault { return newFault("DELETE", secret(id, "-kubeconfig"), true) }, shortCall, false, false},
		// Nothing of the release written: the old CA comes back.
		{"Helm's first write fails", func(id string) *fault {
			return newFault("POST", "/namespaces/"+projectNamespace()+"/secrets?", false)
		}, 45 * time.Second, false, false},
		// The release has the new marker: applied.
		{"Helm's write of the control plane fails", func(id string) *fault {
			return newFault("PATCH", "/kubeadmcontrolplanes/"+id, false)
		}, 45 * time.Second, false, true},
		{"Helm write past the deadline", func(id string) *fault { return newFault("PATCH", "/kubeadmcontrolplanes/"+id, true) }, shortCall, true, true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Each case its own sidecar, fault injector and cluster: a
			// fault armed for one cannot fail another's requests, so the
			// cases run side by side.
			t.Parallel()
			faults := &faultInjector{}
			sc := startSidecar(t, harness.SidecarOptions{Name: fmt.Sprintf("rotate-atomic-%d", i), KubeTransport: faults.wrap})
			c := newCluster(t, "rot-atomic", "v1.33.2", 1)
			c.via = sc.Driver
			stackID := c.create(t, sc.Driver)
			t.Cleanup(func() { deleteCluster(t, sc.Driver, c) })
			if tt.wantNewCA {
				// Machines take a new CA by being replaced, which Cluster
				// API does for a cluster that is up: users rotate the CA
				// of a complete cluster. A rotation during the first boot
				// leaves the control plane machine on certificates of the
				// old CA that nothing trusts any more, so it never becomes
				// ready. The other cases keep the old CA.
				c.waitFor(t, "CREATE_COMPLETE", 3*time.Minute)
			}
			oldCA := c.certs.GetCa().GetCertificate()
			newAuth, _, err := certstest.Authorities("rotated")
			if err != nil {
				t.Fatal(err)
			}
			f := tt.fault(stackID)
			faults.arm(f)
			defer faults.arm(nil)
			defer f.let()
			applied, err := rotateCA(sc.Driver, c, harness.CertificateAuthorities(newAuth), tt.deadline)
			select {
			case <-f.fired:
			default:
				t.Fatalf("the rotation never made the request %s %s (answered %v)", f.method, f.path, err)
			}
			t.Logf("RotateCACertificate answered %v (applied: %v)", status.Code(err), applied)
			if (err == nil) != tt.wantOK {
				t.Errorf("RotateCACertificate: %v, want success %v", err, tt.wantOK)
			}
			if err == nil && applied {
				t.Error("a successful answer carries the applied trailer")
			}
			magnumKeepsNew := err == nil || applied
			if magnumKeepsNew != tt.wantNewCA {
				t.Errorf("Magnum keeps the new CA: %v, want %v", magnumKeepsNew, tt.wantNewCA)
			}
			caSecretsHold(t, stackID, map[bool]string{true: string(newAuth.CA.Certificate), false: oldCA}[magnumKeepsNew], magnumKeepsNew)
			switch {
			case tt.wantOK:
				// Helm still writes in the background; once it is let
				// through, the status path follows the roll to its end.
				f.let()
				c.setStatus("UPDATE_IN_PROGRESS")
				c.waitFor(t, "UPDATE_COMPLETE", 4*time.Minute)
			case tt.wantNewCA:
				// Magnum holds the cluster UPDATE_FAILED on the new CA; a
				// resize (which Magnum allows from there) finishes the roll.
				ctx, cancel := callCtx()
				_, err := sc.Driver.ResizeCluster(ctx, c.resizeRequest(1))
				cancel()
				if err != nil {
					t.Fatalf("resize after the applied rotation: %v", err)
				}
				c.waitFor(t, "UPDATE_COMPLETE", 4*time.Minute)
				caSecretsHold(t, stackID, string(newAuth.CA.Certificate), true)
			}
		})
	}
}

// rotateCA is the shim's call, within deadline: its error, and whether the
// answer says the new CA reached the management cluster all the same.
func rotateCA(d pb.DriverServiceClient, c *cluster, cas *pb.CertificateAuthorities, deadline time.Duration) (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	var trailer metadata.MD
	_, err := d.RotateCACertificate(ctx, &pb.RotateCACertificateRequest{Context: c.ctx, Spec: c.spec, Certificates: cas}, grpc.Trailer(&trailer))
	return len(trailer.Get(server.AppliedTrailer)) > 0, err
}

// caSecretsHold fails t unless the cluster's <stack>-ca Secret holds the CA
// certificate want (which Magnum keeps: new says which).
func caSecretsHold(t *testing.T, stackID, want string, isNew bool) {
	t.Helper()
	var s corev1.Secret
	if err := stack.Env.Client.Get(context.Background(), client.ObjectKey{Namespace: projectNamespace(), Name: stackID + "-ca"}, &s); err != nil {
		t.Fatal(err)
	}
	if err := pemEqual(string(s.Data["tls.crt"]), []byte(want)); err != nil {
		which := map[bool]string{true: "new", false: "old"}[isNew]
		t.Errorf("Magnum keeps the %s CA, the management cluster's %s-ca Secret does not hold it: %v", which, stackID, err)
	}
}
