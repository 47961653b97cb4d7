package e2e

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/magnum-capi/magnum-capi/server"
	"github.com/magnum-capi/magnum-capi/test/harness"
)

// TestUpgradeAtomic: whichever of Helm's writes fails, or runs past the
// call's deadline, the Kubernetes version Magnum records (the new template
// when the call succeeds or its answer says the change was applied: the
// shim's upgrade_cluster) is the one the control plane is given. The
// release record's first write failing changes nothing;
// the control plane's write failing comes after the release changed (the
// upgrade is applied, and a resize finishes it); the control
// plane's write hanging past the deadline is success, Helm finishing in the
// background and the status path following the upgrade.
func TestUpgradeAtomic(t *testing.T) {
	t.Parallel() // its own sidecar, fault injector and clusters; with the other parallel tests, after the sequential ones
	faults := &faultInjector{}
	sc := startSidecar(t, harness.SidecarOptions{Name: "upgrade-atomic", KubeTransport: faults.wrap})
	tests := []struct {
		name       string
		fault      func(stackID string) *fault
		deadline   time.Duration
		wantOK     bool
		wantNewVer bool
	}{
		{"release record's first write fails", func(id string) *fault {
			return newFault("POST", "/namespaces/"+projectNamespace()+"/secrets?", false)
		}, 45 * time.Second, false, false},
		{"the control plane's write fails", func(id string) *fault {
			return newFault("PATCH", "/kubeadmcontrolplanes/"+id, false)
		}, 45 * time.Second, false, true},
		{"Helm write past the deadline", func(id string) *fault {
			return newFault("PATCH", "/kubeadmcontrolplanes/"+id, true)
		}, shortCall, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster(t, "upg-atomic", "v1.33.2", 1)
			c.via = sc.Driver
			stackID := c.create(t, sc.Driver)
			t.Cleanup(func() { deleteCluster(t, sc.Driver, c) })
			f := tt.fault(stackID)
			faults.arm(f)
			defer faults.arm(nil)
			defer f.let()

			ctx, cancel := context.WithTimeout(context.Background(), tt.deadline)
			var trailer metadata.MD
			_, err := sc.Driver.UpgradeCluster(ctx, c.upgradeRequest("v1.34.1"), grpc.Trailer(&trailer))
			cancel()
			applied := len(trailer.Get(server.AppliedTrailer)) > 0
			select {
			case <-f.fired:
			default:
				t.Fatalf("the upgrade never made the request %s %s (answered %v)", f.method, f.path, err)
			}
			t.Logf("UpgradeCluster answered %v (applied: %v)", status.Code(err), applied)
			if (err == nil) != tt.wantOK {
				t.Errorf("UpgradeCluster: %v, want success %v", err, tt.wantOK)
			}
			magnumRecordsNew := err == nil || applied
			if magnumRecordsNew != tt.wantNewVer {
				t.Errorf("Magnum records the new template: %v, want %v", magnumRecordsNew, tt.wantNewVer)
			}
			if tt.wantOK {
				f.let()
				c.waitFor(t, "UPDATE_COMPLETE", 5*time.Minute)
			}
			want := map[bool]string{true: "v1.34.1", false: "v1.33.2"}[magnumRecordsNew]
			if err != nil && applied {
				// Magnum holds the cluster UPDATE_FAILED on the new
				// template; a resize (which Magnum allows from there, an
				// upgrade it does not) renders it and finishes the upgrade.
				ctx, cancel := callCtx()
				_, err = sc.Driver.ResizeCluster(ctx, c.resizeRequest(1))
				cancel()
				if err != nil {
					t.Fatalf("resize after the applied upgrade: %v", err)
				}
			}
			if got := controlPlaneVersion(t, stackID); got != want {
				t.Errorf("Magnum records %s, the control plane is given %s", want, got)
			}
		})
	}
}

// controlPlaneVersion is the Kubernetes version the cluster's
// KubeadmControlPlane is given.
func controlPlaneVersion(t *testing.T, stackID string) string {
	t.Helper()
	var kcp unstructured.Unstructured
	kcp.SetGroupVersionKind(schema.GroupVersionKind{Group: "controlplane.cluster.x-k8s.io", Version: "v1beta2", Kind: "KubeadmControlPlane"})
	if err := stack.Env.Client.Get(context.Background(), client.ObjectKey{Namespace: projectNamespace(), Name: stackID + "-control-plane"}, &kcp); err != nil {
		t.Fatal(err)
	}
	v, _, _ := unstructured.NestedString(kcp.Object, "spec", "version")
	return v
}
