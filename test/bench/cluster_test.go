package bench

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

// cluster is what Magnum holds about one cluster, as the shim sends it.
type cluster struct {
	spec  *pb.ClusterSpec
	ctx   *pb.RequestContext
	certs *pb.CertificateAuthorities
}

// newCluster is a cluster of one control-plane node and workers in the
// stack's demo project, as Magnum would ask for it (e2e's newCluster).
func newCluster(b testing.TB, w *world, name string, workers int32) *cluster {
	b.Helper()
	tok, err := w.stack.Keystone.Token(context.Background(), w.stack.Info.User)
	if err != nil {
		b.Fatal(err)
	}
	auth, _, err := certstest.Authorities(name)
	if err != nil {
		b.Fatal(err)
	}
	c := specFor(w, name, uuid.NewString(), w.stack.Info.Project.ID, workers)
	return &cluster{
		spec:  c,
		ctx:   &pb.RequestContext{AuthToken: tok.ID, AuthUrl: w.stack.Info.AuthURL, UserId: tok.UserID, ProjectId: tok.ProjectID, RequestId: "req-" + uuid.NewString()},
		certs: toProto(auth),
	}
}

const kubeVersion = "v1.33.2"

// specFor is the ClusterSpec Magnum sends for a cluster in project.
func specFor(w *world, name, id, project string, workers int32) *pb.ClusterSpec {
	now := time.Now().UTC().Format(time.RFC3339)
	tmpl := &pb.ClusterTemplate{
		Uuid: "5b1e3a53-6f0c-4d6e-9a43-000000000001", Name: "k8s-" + kubeVersion, ImageId: w.stack.Info.Images[kubeVersion],
		ExternalNetworkId: w.stack.Info.ExternalNetworkID, NetworkDriver: "calico", Coe: "kubernetes",
		ServerType: "vm", ClusterDistro: "ubuntu", MasterFlavorId: "m1.medium", FlavorId: "m1.medium",
		DnsNameserver: "8.8.8.8", MasterLbEnabled: true, FloatingIpEnabled: true, Labels: map[string]string{},
	}
	c := &pb.Cluster{
		Uuid: id, Name: name, ProjectId: project, UserId: w.stack.Info.User.ID, ClusterTemplateId: tmpl.Uuid,
		MasterFlavorId: "m1.medium", FlavorId: "m1.medium", Status: "CREATE_IN_PROGRESS", CreateTimeout: 60,
		MasterCount: 1, NodeCount: workers, CreatedAt: now, UpdatedAt: now, Labels: map[string]string{},
	}
	return &pb.ClusterSpec{Cluster: c, ClusterTemplate: tmpl, Nodegroups: []*pb.NodeGroup{
		{Uuid: uuid.NewString(), Name: "default-master", ClusterId: id, ProjectId: project, Role: "master",
			FlavorId: "m1.medium", ImageId: tmpl.ImageId, NodeCount: 1, IsDefault: true, Status: "CREATE_IN_PROGRESS"},
		{Uuid: uuid.NewString(), Name: "default-worker", ClusterId: id, ProjectId: project, Role: "worker",
			FlavorId: "m1.medium", ImageId: tmpl.ImageId, NodeCount: workers, IsDefault: true, Status: "CREATE_IN_PROGRESS"},
	}}
}

func toProto(a certs.Authorities) *pb.CertificateAuthorities {
	pair := func(k certs.KeyPair) *pb.KeyPair {
		return &pb.KeyPair{Certificate: string(k.Certificate), PrivateKey: string(k.PrivateKey)}
	}
	return &pb.CertificateAuthorities{Ca: pair(a.CA), EtcdCa: pair(a.EtcdCA), FrontProxyCa: pair(a.FrontProxyCA), ServiceAccount: pair(a.ServiceAccount)}
}

// create calls CreateCluster and records the stack id it answers.
func (c *cluster) create(ctx context.Context, driver pb.DriverServiceClient) error {
	resp, err := driver.CreateCluster(ctx, &pb.CreateClusterRequest{Context: c.ctx, Spec: c.spec, Certificates: c.certs, CreateTimeout: 60})
	if err != nil {
		return fmt.Errorf("CreateCluster %s: %w", c.spec.Cluster.Name, err)
	}
	c.spec.Cluster.StackId = resp.GetStackId()
	return nil
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

// waitFor polls GetClusterStatus every 250 ms until the cluster reaches
// want (see pollUntil).
func (c *cluster) waitFor(driver pb.DriverServiceClient, want string, timeout time.Duration) error {
	return c.pollUntil(driver, want, 250*time.Millisecond, timeout)
}

// pollUntil polls GetClusterStatus every interval, writing the answers back
// as Magnum's periodic job does, until the cluster reaches want; another
// final state or the timeout is an error.
func (c *cluster) pollUntil(driver pb.DriverServiceClient, want string, interval, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		resp, err := driver.GetClusterStatus(ctx, &pb.GetClusterStatusRequest{Spec: c.spec})
		cancel()
		if err != nil {
			return fmt.Errorf("GetClusterStatus %s: %w", c.spec.Cluster.StackId, err)
		}
		c.apply(resp.GetStatus())
		st := c.spec.Cluster.Status
		if st == want {
			return nil
		}
		if strings.HasSuffix(st, "_FAILED") || strings.HasSuffix(st, "_COMPLETE") {
			return fmt.Errorf("cluster %s reached %s (%s) waiting for %s", c.spec.Cluster.StackId, st, c.spec.Cluster.StatusReason, want)
		}
		time.Sleep(interval)
	}
	return fmt.Errorf("cluster %s still %s (%s) after %s waiting for %s", c.spec.Cluster.StackId, c.spec.Cluster.Status, c.spec.Cluster.StatusReason, timeout, want)
}

// delete asks for the cluster's deletion and polls until DELETE_COMPLETE
// (the polls also run the cleanup after deletion).
func (c *cluster) delete(driver pb.DriverServiceClient, timeout time.Duration) error {
	c.spec.Cluster.Status = "DELETE_IN_PROGRESS"
	for _, ng := range c.spec.Nodegroups {
		ng.Status = "DELETE_IN_PROGRESS"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	_, err := driver.DeleteCluster(ctx, &pb.DeleteClusterRequest{Context: c.ctx, Spec: c.spec})
	cancel()
	if err != nil {
		return fmt.Errorf("DeleteCluster %s: %w", c.spec.Cluster.StackId, err)
	}
	return c.waitFor(driver, "DELETE_COMPLETE", timeout)
}
