package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
	"github.com/magnum-capi/magnum-capi/test/harness"
)

// cluster is a Magnum cluster as the shim would describe it, with the state
// the shim keeps writing back.
type cluster struct {
	spec  *pb.ClusterSpec
	ctx   *pb.RequestContext
	certs *pb.CertificateAuthorities
	// via is the sidecar polled by waitFor; nil: the package's shared one.
	via pb.DriverServiceClient
}

func (c *cluster) client() pb.DriverServiceClient {
	if c.via != nil {
		return c.via
	}
	return driver
}

// newCluster is a cluster freshly created by Magnum's conductor: status
// CREATE_IN_PROGRESS, a default-master and a default-worker node group.
func newCluster(t *testing.T, name string, kubeVersion string, workers int32) *cluster {
	t.Helper()
	r, err := stack.NewClusterRequest(context.Background(), name, kubeVersion, workers)
	if err != nil {
		t.Fatal(err)
	}
	return &cluster{spec: r.Spec, ctx: r.Context, certs: r.Certs}
}

// waitFor polls c's sidecar as Magnum's periodic job does, every 100 ms,
// until the cluster reaches want (harness.WaitForStatus), and returns the
// statuses it went through; any other final state fails the test.
func (c *cluster) waitFor(t *testing.T, want string, timeout time.Duration) []string {
	t.Helper()
	return c.waitOn(t, c.client(), want, timeout)
}

// waitOn is waitFor through the sidecar d.
func (c *cluster) waitOn(t *testing.T, d pb.DriverServiceClient, want string, timeout time.Duration) []string {
	t.Helper()
	seen, err := harness.WaitForStatus(d, c.spec, want, timeout, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	return seen
}

// apply writes a status answer back as the shim does.
func (c *cluster) apply(s *pb.ClusterStatus) { harness.WriteStatus(c.spec, s) }

func (c *cluster) nodegroup(name string) *pb.NodeGroup {
	for _, ng := range c.spec.Nodegroups {
		if ng.GetName() == name {
			return ng
		}
	}
	panic(fmt.Sprintf("no node group %s", name))
}

func callCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 45*time.Second)
}
