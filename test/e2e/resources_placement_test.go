package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
	"github.com/magnum-capi/magnum-capi/test/harness"
	"github.com/magnum-capi/magnum-capi/test/testchart"
)

// TestTwoManagementClusters: a template labelled
// capi_management_cluster=second places the cluster on the second
// management cluster; every later operation and status read goes there,
// even after the label changes and from a sidecar that never saw the
// create; a template without the label uses the first; an unknown name is
// the user's error. Everything the driver made for the cluster carries its
// uuid and project labels.
func TestTwoManagementClusters(t *testing.T) {
	if stack.SecondEnv == nil {
		t.Fatal("the stack has no second management cluster")
	}
	ns := projectNamespace()
	first, second := stack.Env, stack.SecondEnv

	bad := newCluster(t, "placed-nowhere", "v1.33.2", 1)
	bad.spec.ClusterTemplate.Labels["capi_management_cluster"] = "third"
	ctx, cancel := callCtx()
	_, err := driver.CreateCluster(ctx, &pb.CreateClusterRequest{Context: bad.ctx, Spec: bad.spec, Certificates: bad.certs})
	cancel()
	if s, _ := status.FromError(err); s.Code() != codes.InvalidArgument || !strings.Contains(s.Message(), "capi_management_cluster") || !strings.Contains(s.Message(), "third") {
		t.Errorf("an unknown management cluster: %v, want InvalidArgument naming the label and value", err)
	}

	c := newCluster(t, "placed", "v1.33.2", 1)
	c.spec.ClusterTemplate.Labels["capi_management_cluster"] = harness.SecondManagementClusterName
	stackID := c.create(t, driver)
	onDefault := newCluster(t, "unplaced", "v1.33.2", 1)
	defaultID := onDefault.create(t, driver)

	if n := len(history(t, second.Config, ns, stackID)); n != 1 {
		t.Errorf("the labelled cluster has %d revisions on the second management cluster, want 1", n)
	}
	if n := len(history(t, first.Config, ns, stackID)); n != 0 {
		t.Errorf("the labelled cluster has %d revisions on the first management cluster", n)
	}
	if len(history(t, first.Config, ns, defaultID)) != 1 || len(history(t, second.Config, ns, defaultID)) != 0 {
		t.Error("the unlabelled cluster is not (only) on the first management cluster")
	}
	c.waitOn(t, driver, "CREATE_COMPLETE", 3*time.Minute)
	if !strings.HasPrefix(c.spec.Cluster.ApiAddress, "https://") || len(c.nodegroup("default-worker").NodeAddresses) != 1 {
		t.Errorf("status of the placed cluster: api %q workers %v", c.spec.Cluster.ApiAddress, c.nodegroup("default-worker").NodeAddresses)
	}
	everythingLabelled(t, second.Config, second.Client, ns, stackID, c.spec.Cluster.Uuid)

	// The template's label changes (or the cluster moves to a template
	// without it): the cluster stays where it is, for a sidecar that
	// created it and for one that never saw it.
	c.spec.ClusterTemplate.Labels["capi_management_cluster"] = "default"
	fresh := startSidecar(t, harness.SidecarOptions{Name: "placement"})
	ctx, cancel = callCtx()
	_, err = fresh.Driver.ResizeCluster(ctx, c.resizeRequest(2))
	cancel()
	if err != nil {
		t.Fatalf("resize after the label changed: %v", err)
	}
	if n := len(history(t, second.Config, ns, stackID)); n != 2 {
		t.Errorf("the resize made %d revisions on the second management cluster, want 2 in all", n)
	}
	if n := len(history(t, first.Config, ns, stackID)); n != 0 {
		t.Errorf("the resize went to the first management cluster (%d revisions)", n)
	}
	c.waitOn(t, fresh.Driver, "UPDATE_COMPLETE", 3*time.Minute)
	if got := len(c.nodegroup("default-worker").NodeAddresses); got != 2 {
		t.Errorf("%d workers reported after the resize, want 2", got)
	}

	delete(c.spec.ClusterTemplate.Labels, "capi_management_cluster")
	c.remove(t, fresh.Driver)
	var left corev1.SecretList
	if err := second.Client.List(context.Background(), &left, client.InNamespace(ns), client.MatchingLabels{"magnum.openstack.org/cluster-uuid": c.spec.Cluster.Uuid}); err != nil {
		t.Fatal(err)
	}
	if n := len(left.Items); n != 0 {
		t.Errorf("%d Secrets of the cluster left on the second management cluster after DELETE_COMPLETE", n)
	}
	if creds := credentialsOf(t, stack.Info.User.ID, c.spec.Cluster.Uuid); len(creds) != 0 {
		t.Errorf("%d credentials left after DELETE_COMPLETE", len(creds))
	}
	onDefault.remove(t, driver)
}

// everythingLabelled checks the driver's labels (cluster uuid, project) on
// everything made for the cluster: its namespace (project only: clusters
// share it), its Secrets, its release's records, and every object the
// chart rendered.
func everythingLabelled(t *testing.T, cfg *rest.Config, c client.Client, ns, stackID, clusterUUID string) {
	t.Helper()
	ctx := context.Background()
	const uuidLabel, projectLabel = "magnum.openstack.org/cluster-uuid", "magnum.openstack.org/project-id"
	var namespace corev1.Namespace
	if err := c.Get(ctx, client.ObjectKey{Name: ns}, &namespace); err != nil {
		t.Fatal(err)
	}
	if namespace.Labels[projectLabel] == "" {
		t.Errorf("namespace %s labels %v lack the project", ns, namespace.Labels)
	}
	check := func(kind, name string, labels map[string]string) {
		if labels[uuidLabel] != clusterUUID || labels[projectLabel] == "" {
			t.Errorf("%s %s labels %v lack the cluster's uuid or project", kind, name, labels)
		}
	}
	for _, suffix := range []string{"-ca", "-etcd", "-proxy", "-sa", "-cloud-credentials"} {
		var s corev1.Secret
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: stackID + suffix}, &s); err != nil {
			t.Fatal(err)
		}
		check("Secret", s.Name, s.Labels)
	}
	var records corev1.SecretList
	if err := c.List(ctx, &records, client.InNamespace(ns), client.MatchingLabels{"owner": "helm", "name": stackID}); err != nil {
		t.Fatal(err)
	}
	for _, s := range records.Items {
		check("release record", s.Name, s.Labels)
	}
	revs := history(t, cfg, ns, stackID)
	objs, err := testchart.ParseManifest(revs[len(revs)-1].Manifest)
	if err != nil {
		t.Fatal(err)
	}
	for _, rendered := range objs {
		obj := &unstructured.Unstructured{}
		obj.SetGroupVersionKind(rendered.GroupVersionKind())
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: rendered.GetName()}, obj); err != nil {
			t.Errorf("%s %s: %v", rendered.GetKind(), rendered.GetName(), err)
			continue
		}
		check(obj.GetKind(), obj.GetName(), obj.GetLabels())
	}
	if len(objs) < 10 {
		t.Errorf("the release has only %d objects", len(objs))
	}
}
