package harness

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/magnum-capi/magnum-capi/certs"
	"github.com/magnum-capi/magnum-capi/certs/certstest"
	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
)

// What Go tests play of Magnum and the shim: the ClusterSpec the conductor
// sends for a new cluster, the shim's write-back of status answers onto
// Magnum's objects, and Magnum's periodic status job. The Python tests run
// the real ones (magnum/).

// NewClusterSpec is the ClusterSpec Magnum's conductor sends for a cluster
// it just stored in project: CREATE_IN_PROGRESS, a template on the stack's
// image of kubeVersion, a default-master of one node and a default-worker
// of workers.
func (h *Harness) NewClusterSpec(name, id, project, kubeVersion string, workers int32) *pb.ClusterSpec {
	now := time.Now().UTC().Format(time.RFC3339)
	tmpl := &pb.ClusterTemplate{
		Uuid: uuid.NewString(), Name: "k8s-" + kubeVersion, ImageId: h.Info.Images[kubeVersion],
		ExternalNetworkId: h.Info.ExternalNetworkID, NetworkDriver: "calico", Coe: "kubernetes",
		ServerType: "vm", ClusterDistro: "ubuntu", MasterFlavorId: "m1.medium", FlavorId: "m1.medium",
		DnsNameserver: "8.8.8.8", MasterLbEnabled: true, FloatingIpEnabled: true, Labels: map[string]string{},
	}
	c := &pb.Cluster{
		Uuid: id, Name: name, ProjectId: project, UserId: h.Info.User.ID, ClusterTemplateId: tmpl.Uuid,
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

// ClusterRequest is what the shim sends for a new cluster: Magnum's
// objects, the request context of the stack's demo user and the CA
// material Magnum made.
type ClusterRequest struct {
	Spec    *pb.ClusterSpec
	Context *pb.RequestContext
	Certs   *pb.CertificateAuthorities
}

// NewClusterRequest is the request for a new cluster of the demo user in
// the demo project (NewClusterSpec), with a fresh token and CA material.
func (h *Harness) NewClusterRequest(ctx context.Context, name, kubeVersion string, workers int32) (ClusterRequest, error) {
	tok, err := h.Keystone.Token(ctx, h.Info.User)
	if err != nil {
		return ClusterRequest{}, err
	}
	auth, _, err := certstest.Authorities(name)
	if err != nil {
		return ClusterRequest{}, err
	}
	return ClusterRequest{
		Spec: h.NewClusterSpec(name, uuid.NewString(), h.Info.Project.ID, kubeVersion, workers),
		Context: &pb.RequestContext{AuthToken: tok.ID, AuthUrl: h.Info.AuthURL, UserId: tok.UserID, ProjectId: tok.ProjectID,
			RequestId: "req-" + uuid.NewString()},
		Certs: CertificateAuthorities(auth),
	}, nil
}

// CertificateAuthorities is a cluster's CA material as the shim sends it.
func CertificateAuthorities(a certs.Authorities) *pb.CertificateAuthorities {
	pair := func(k certs.KeyPair) *pb.KeyPair {
		return &pb.KeyPair{Certificate: string(k.Certificate), PrivateKey: string(k.PrivateKey)}
	}
	return &pb.CertificateAuthorities{Ca: pair(a.CA), EtcdCa: pair(a.EtcdCA), FrontProxyCa: pair(a.FrontProxyCA), ServiceAccount: pair(a.ServiceAccount)}
}

// WriteStatus writes a status answer onto spec as the shim writes it onto
// Magnum's objects: the cluster's status, reason, API address and version
// (an empty address or version keeps the stored one), each node group's
// status, count and addresses, and node groups the answer says to destroy
// removed.
func WriteStatus(spec *pb.ClusterSpec, s *pb.ClusterStatus) {
	spec.Cluster.Status = s.GetStatus()
	spec.Cluster.StatusReason = s.GetStatusReason()
	if s.GetApiAddress() != "" {
		spec.Cluster.ApiAddress = s.GetApiAddress()
	}
	if s.GetCoeVersion() != "" {
		spec.Cluster.CoeVersion = s.GetCoeVersion()
	}
	kept := spec.Nodegroups[:0]
	for _, ng := range spec.Nodegroups {
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
	spec.Nodegroups = kept
}

// WaitForStatus plays Magnum's periodic status job: it polls
// GetClusterStatus every interval, writing each answer back (WriteStatus),
// until the cluster reaches want. Another final state (FAILED, or another
// COMPLETE), a failed call or the timeout ends it with an error. It
// returns the statuses the cluster went through.
func WaitForStatus(driver pb.DriverServiceClient, spec *pb.ClusterSpec, want string, timeout, interval time.Duration) ([]string, error) {
	var seen []string
	timeout = Patience(timeout)
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		resp, err := driver.GetClusterStatus(ctx, &pb.GetClusterStatusRequest{Spec: spec})
		cancel()
		if err != nil {
			return seen, fmt.Errorf("GetClusterStatus of %s waiting for %s: %w", spec.Cluster.StackId, want, err)
		}
		WriteStatus(spec, resp.GetStatus())
		st := spec.Cluster.Status
		if len(seen) == 0 || seen[len(seen)-1] != st {
			seen = append(seen, st)
		}
		if st == want {
			return seen, nil
		}
		if strings.HasSuffix(st, "_FAILED") || strings.HasSuffix(st, "_COMPLETE") {
			return seen, fmt.Errorf("cluster %s reached %s (%s) waiting for %s; transitions %v", spec.Cluster.StackId, st, spec.Cluster.StatusReason, want, seen)
		}
		time.Sleep(interval)
	}
	return seen, fmt.Errorf("cluster %s still %s (%s) after %s waiting for %s; transitions %v",
		spec.Cluster.StackId, spec.Cluster.Status, spec.Cluster.StatusReason, timeout, want, seen)
}
