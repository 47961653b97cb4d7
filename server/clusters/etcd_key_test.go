package clusters

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/magnum-capi/magnum-capi/helmvalues"
	"github.com/magnum-capi/magnum-capi/server/kube"
	"github.com/magnum-capi/magnum-capi/server/release"
)

// TestEnsureEtcdKey: a key is made once, when encryption is asked for, and
// never replaced; a release deployed with encryption whose key is gone is
// refused rather than given a key that cannot read its Secrets.
func TestEnsureEtcdKey(t *testing.T) {
	on := map[string]any{"etcd": map[string]any{"encryption": map[string]any{"enabled": true}}}
	off := map[string]any{}
	encrypted := &release.Release{Values: on}
	tests := []struct {
		name          string
		steps         []map[string]any // values of successive deploys
		deployed      *release.Release
		wantSecret    bool
		wantCondition bool
	}{
		{name: "off: no key", steps: []map[string]any{off}},
		{name: "on: a key", steps: []map[string]any{on}, wantSecret: true},
		{name: "on twice: the same key", steps: []map[string]any{on, on}, wantSecret: true},
		{name: "deployed with encryption, key gone", steps: []map[string]any{on}, deployed: encrypted, wantCondition: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &Service{log: slog.New(slog.DiscardHandler)}
			kc := &kube.Cluster{Client: fake.NewClientBuilder().Build()}
			op := &operation{spec: Spec{Cluster: helmvalues.Cluster{StackID: "demo-abcdefghijkl", UUID: "u", ProjectID: "p"}},
				mc: &ManagementCluster{Kube: kc}, ns: "magnum-p"}
			ctx := context.Background()
			var first []byte
			for i, values := range tt.steps {
				err := s.ensureEtcdKey(ctx, op, tt.deployed, values)
				var precondition *PreconditionError
				if tt.wantCondition {
					if !errors.As(err, &precondition) {
						t.Fatalf("error %v, want a PreconditionError", err)
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				secret, err := kc.GetSecret(ctx, op.ns, "demo-abcdefghijkl-etcd-key")
				if err != nil {
					t.Fatal(err)
				}
				if (secret != nil) != tt.wantSecret {
					t.Fatalf("step %d: Secret %v, want one: %v", i, secret, tt.wantSecret)
				}
				if secret == nil {
					continue
				}
				key := secret.Data[etcdKeyDataKey]
				if len(key) != 32 || secret.Labels["magnum.openstack.org/cluster-uuid"] != "u" {
					t.Errorf("step %d: key of %d bytes, labels %v", i, len(key), secret.Labels)
				}
				if first == nil {
					first = key
				} else if !bytes.Equal(first, key) {
					t.Errorf("step %d replaced the key", i)
				}
			}
		})
	}
}
