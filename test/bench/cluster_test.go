package bench

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
	"github.com/magnum-capi/magnum-capi/test/harness"
)

// cluster is what Magnum holds about one cluster, as the shim sends it.
type cluster struct{ harness.ClusterRequest }

// newCluster is a cluster of one control-plane node and workers in the
// stack's demo project, as Magnum would ask for it (e2e's newCluster).
func newCluster(b testing.TB, w *world, name string, workers int32) *cluster {
	b.Helper()
	r, err := w.stack.NewClusterRequest(context.Background(), name, kubeVersion, workers)
	if err != nil {
		b.Fatal(err)
	}
	return &cluster{r}
}

const kubeVersion = "v1.33.2"

// batch is n clusters named prefix-000… (one control plane machine and one
// worker each) sharing one token and one set of authorities: minting n of
// each would measure Keystone and key generation, not the sidecar.
func batch(b testing.TB, w *world, prefix string, n int) []*cluster {
	b.Helper()
	proto := newCluster(b, w, prefix, 1)
	clusters := make([]*cluster, n)
	for i := range clusters {
		spec := specFor(w, fmt.Sprintf("%s-%03d", prefix, i), uuid.NewString(), w.stack.Info.Project.ID, 1)
		clusters[i] = &cluster{harness.ClusterRequest{Spec: spec, Context: proto.Context, Certs: proto.Certs}}
	}
	return clusters
}

// specFor is the ClusterSpec Magnum sends for a cluster in project.
func specFor(w *world, name, id, project string, workers int32) *pb.ClusterSpec {
	return w.stack.NewClusterSpec(name, id, project, kubeVersion, workers)
}

// create calls CreateCluster and records the stack id it answers.
func (c *cluster) create(ctx context.Context, driver pb.DriverServiceClient) error {
	resp, err := driver.CreateCluster(ctx, &pb.CreateClusterRequest{Context: c.Context, Spec: c.Spec, Certificates: c.Certs})
	if err != nil {
		return fmt.Errorf("CreateCluster %s: %w", c.Spec.Cluster.Name, err)
	}
	c.Spec.Cluster.StackId = resp.GetStackId()
	return nil
}

// waitFor polls GetClusterStatus, writing the answers back as Magnum's
// periodic job does, until the cluster reaches want; another final state
// or the timeout is an error.
func (c *cluster) waitFor(driver pb.DriverServiceClient, want string, timeout time.Duration) error {
	_, err := harness.WaitForStatus(driver, c.Spec, want, timeout, 250*time.Millisecond)
	return err
}

// delete asks for the cluster's deletion and polls until DELETE_COMPLETE
// (the polls also run the cleanup after deletion).
func (c *cluster) delete(driver pb.DriverServiceClient, timeout time.Duration) error {
	c.Spec.Cluster.Status = "DELETE_IN_PROGRESS"
	for _, ng := range c.Spec.Nodegroups {
		ng.Status = "DELETE_IN_PROGRESS"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	_, err := driver.DeleteCluster(ctx, &pb.DeleteClusterRequest{Context: c.Context, Spec: c.Spec})
	cancel()
	if err != nil {
		return fmt.Errorf("DeleteCluster %s: %w", c.Spec.Cluster.StackId, err)
	}
	return c.waitFor(driver, "DELETE_COMPLETE", timeout)
}
