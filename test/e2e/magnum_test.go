package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/magnum-capi/magnum-capi/certs"
	"github.com/magnum-capi/magnum-capi/certs/certstest"
	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
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
	tok, err := stack.Keystone.Token(context.Background(), stack.Info.User)
	if err != nil {
		t.Fatal(err)
	}
	auth, _, err := certstest.Authorities(name)
	if err != nil {
		t.Fatal(err)
	}
	id := uuid.NewString()
	now := time.Now().UTC().Format(time.RFC3339)
	project := stack.Info.Project.ID
	tmpl := &pb.ClusterTemplate{
		Uuid: uuid.NewString(), Name: "k8s-" + kubeVersion, ImageId: stack.Info.Images[kubeVersion],
		ExternalNetworkId: stack.Info.ExternalNetworkID, NetworkDriver: "calico", Coe: "kubernetes",
		ServerType: "vm", ClusterDistro: "ubuntu", MasterFlavorId: "m1.medium", FlavorId: "m1.medium",
		DnsNameserver: "8.8.8.8", MasterLbEnabled: true, FloatingIpEnabled: true, Labels: map[string]string{},
	}
	c := &pb.Cluster{
		Uuid: id, Name: name, ProjectId: project, UserId: stack.Info.User.ID, ClusterTemplateId: tmpl.Uuid,
		MasterFlavorId: "m1.medium", FlavorId: "m1.medium", Status: "CREATE_IN_PROGRESS", CreateTimeout: 60,
		MasterCount: 1, NodeCount: workers, CreatedAt: now, UpdatedAt: now, Labels: map[string]string{},
	}
	spec := &pb.ClusterSpec{Cluster: c, ClusterTemplate: tmpl, Nodegroups: []*pb.NodeGroup{
		{Uuid: uuid.NewString(), Name: "default-master", ClusterId: id, ProjectId: project, Role: "master",
			FlavorId: "m1.medium", ImageId: tmpl.ImageId, NodeCount: 1, IsDefault: true, Status: "CREATE_IN_PROGRESS"},
		{Uuid: uuid.NewString(), Name: "default-worker", ClusterId: id, ProjectId: project, Role: "worker",
			FlavorId: "m1.medium", ImageId: tmpl.ImageId, NodeCount: workers, IsDefault: true, Status: "CREATE_IN_PROGRESS"},
	}}
	return &cluster{
		spec:  spec,
		ctx:   &pb.RequestContext{AuthToken: tok.ID, AuthUrl: stack.Info.AuthURL, UserId: tok.UserID, ProjectId: tok.ProjectID, RequestId: "req-" + uuid.NewString()},
		certs: toProto(auth),
	}
}

func toProto(a certs.Authorities) *pb.CertificateAuthorities {
	pair := func(k certs.KeyPair) *pb.KeyPair {
		return &pb.KeyPair{Certificate: string(k.Certificate), PrivateKey: string(k.PrivateKey)}
	}
	return &pb.CertificateAuthorities{Ca: pair(a.CA), EtcdCa: pair(a.EtcdCA), FrontProxyCa: pair(a.FrontProxyCA), ServiceAccount: pair(a.ServiceAccount)}
}

// apply writes a status answer back as the shim does.
func (c *cluster) apply(s *pb.ClusterStatus) {
	c.spec.Cluster.Status = s.GetStatus()
	c.spec.Cluster.StatusReason = s.GetStatusReason()
	if s.GetApiAddress() != "" {
		c.spec.Cluster.ApiAddress = s.GetApiAddress()
	}
	if s.GetCoeVersion() != "" {
		c.spec.Cluster.CoeVersion = s.GetCoeVersion()
	}
	kept := c.spec.Nodegroups[:0]
	for _, ng := range c.spec.Nodegroups {
		destroyed := false
		for _, st := range s.GetNodegroups() {
			if st.GetUuid() != ng.GetUuid() {
				continue
			}
			destroyed = st.GetDestroy()
			ng.Status, ng.StatusReason = st.GetStatus(), st.GetStatusReason()
			ng.NodeCount, ng.NodeAddresses = st.GetNodeCount(), st.GetNodeAddresses()
		}
		if !destroyed {
			kept = append(kept, ng)
		}
	}
	c.spec.Nodegroups = kept
}

// waitFor polls GetClusterStatus every 100 ms, writing answers back, until
// the cluster reaches want; it fails on any other terminal state.
func (c *cluster) waitFor(t *testing.T, want string, timeout time.Duration) []string {
	t.Helper()
	var seen []string
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		resp, err := c.client().GetClusterStatus(ctx, &pb.GetClusterStatusRequest{Spec: c.spec})
		cancel()
		if err != nil {
			t.Fatalf("GetClusterStatus: %v", err)
		}
		c.apply(resp.GetStatus())
		st := c.spec.Cluster.Status
		if len(seen) == 0 || seen[len(seen)-1] != st {
			seen = append(seen, st)
		}
		if st == want {
			return seen
		}
		if strings.HasSuffix(st, "_FAILED") || (strings.HasSuffix(st, "_COMPLETE") && st != want) {
			t.Fatalf("cluster reached %s (%s) waiting for %s; transitions %v", st, c.spec.Cluster.StatusReason, want, seen)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("cluster still %s (%s) after %s waiting for %s", c.spec.Cluster.Status, c.spec.Cluster.StatusReason, timeout, want)
	return nil
}

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
