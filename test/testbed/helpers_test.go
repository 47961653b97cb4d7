package testbed

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	bootstrapv1beta1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta1"
)

var bootstrapClusterConfiguration = bootstrapv1beta1.ClusterConfiguration{
	ControllerManager: bootstrapv1beta1.ControlPlaneComponent{ExtraArgs: map[string]string{"cloud-provider": "external"}},
}

func ptr[T any](v T) *T { return &v }

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

// newNamespace creates a namespace named after the test.
func newNamespace(t *testing.T) string {
	t.Helper()
	name := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	if len(name) > 50 {
		name = name[:50]
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: name + "-"}}
	if err := env.Client.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}
