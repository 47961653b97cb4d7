package server

import (
	"fmt"
	"time"

	"github.com/magnum-capi/magnum-capi/capistatus"
	"github.com/magnum-capi/magnum-capi/certs"
	"github.com/magnum-capi/magnum-capi/helmvalues"
	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
	"github.com/magnum-capi/magnum-capi/server/clusters"
)

// The functions here move data between the proto messages (Magnum's objects
// on the wire) and the domain types; they check nothing (validate.go does).

func callerFromProto(c *pb.RequestContext) clusters.Caller {
	return clusters.Caller{
		AuthToken: c.GetAuthToken(), AuthURL: c.GetAuthUrl(), UserID: c.GetUserId(), ProjectID: c.GetProjectId(),
		RegionName: c.GetRegionName(), RequestID: c.GetRequestId(), IsAdmin: c.GetIsAdmin(),
	}
}

func optInt(p *int32) *int {
	if p == nil {
		return nil
	}
	v := int(*p)
	return &v
}

func optBool(p *bool) *bool {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func templateFromProto(t *pb.ClusterTemplate) helmvalues.ClusterTemplate {
	if t == nil {
		// Status and health requests may omit the template (their rules in proto/).
		return helmvalues.ClusterTemplate{}
	}
	registry, tls, public, lb, fip, hidden := t.GetRegistryEnabled(), t.GetTlsDisabled(), t.GetPublic(), t.GetMasterLbEnabled(), t.GetFloatingIpEnabled(), t.GetHidden()
	return helmvalues.ClusterTemplate{
		UUID: t.GetUuid(), Name: t.GetName(), ProjectID: t.GetProjectId(), UserID: t.GetUserId(),
		ImageID: t.GetImageId(), FlavorID: t.GetFlavorId(), MasterFlavorID: t.GetMasterFlavorId(), KeypairID: t.GetKeypairId(),
		DNSNameserver: t.GetDnsNameserver(), ExternalNetworkID: t.GetExternalNetworkId(),
		FixedNetwork: t.GetFixedNetwork(), FixedSubnet: t.GetFixedSubnet(),
		NetworkDriver: t.GetNetworkDriver(), VolumeDriver: t.GetVolumeDriver(),
		APIServerPort: optInt(t.ApiserverPort), DockerVolumeSize: optInt(t.DockerVolumeSize),
		DockerStorageDriver: t.GetDockerStorageDriver(), ClusterDistro: t.GetClusterDistro(), COE: t.GetCoe(),
		HTTPProxy: t.GetHttpProxy(), HTTPSProxy: t.GetHttpsProxy(), NoProxy: t.GetNoProxy(),
		RegistryEnabled: &registry, Labels: t.GetLabels(), TLSDisabled: &tls, Public: &public,
		ServerType: t.GetServerType(), InsecureRegistry: t.GetInsecureRegistry(),
		MasterLBEnabled: &lb, FloatingIPEnabled: &fip, Hidden: &hidden, Tags: t.GetTags(), Driver: t.GetDriver(),
	}
}

func clusterFromProto(c *pb.Cluster) helmvalues.Cluster {
	timeout := int(c.GetCreateTimeout())
	return helmvalues.Cluster{
		UUID: c.GetUuid(), Name: c.GetName(), ProjectID: c.GetProjectId(), UserID: c.GetUserId(),
		ClusterTemplateID: c.GetClusterTemplateId(), StackID: c.GetStackId(), Keypair: c.GetKeypair(),
		Labels: c.GetLabels(), MasterFlavorID: c.GetMasterFlavorId(), FlavorID: c.GetFlavorId(),
		FixedNetwork: c.GetFixedNetwork(), FixedSubnet: c.GetFixedSubnet(),
		FloatingIPEnabled: optBool(c.FloatingIpEnabled), MasterLBEnabled: optBool(c.MasterLbEnabled),
		MasterCount: int(c.GetMasterCount()), NodeCount: int(c.GetNodeCount()), CreateTimeout: &timeout,
		DockerVolumeSize: optInt(c.DockerVolumeSize), Status: c.GetStatus(), StatusReason: c.GetStatusReason(),
		HealthStatus: c.GetHealthStatus(), APIAddress: c.GetApiAddress(), COEVersion: c.GetCoeVersion(),
		ContainerVersion: c.GetContainerVersion(),
	}
}

func nodeGroupFromProto(n *pb.NodeGroup) helmvalues.NodeGroup {
	ng := helmvalues.NodeGroup{
		UUID: n.GetUuid(), Name: n.GetName(), ClusterID: n.GetClusterId(), ProjectID: n.GetProjectId(),
		Role: n.GetRole(), FlavorID: n.GetFlavorId(), ImageID: n.GetImageId(), NodeCount: int(n.GetNodeCount()),
		MinNodeCount: optInt(n.MinNodeCount), MaxNodeCount: optInt(n.MaxNodeCount), IsDefault: n.GetIsDefault(),
		Labels: n.GetLabels(), NodeLabels: n.GetNodeLabels(), NodeAddresses: n.GetNodeAddresses(),
		DockerVolumeSize: optInt(n.DockerVolumeSize), StackID: n.GetStackId(), Status: n.GetStatus(),
		StatusReason: n.GetStatusReason(), Version: n.GetVersion(),
	}
	for _, t := range n.GetNodeTaints() {
		ng.NodeTaints = append(ng.NodeTaints, helmvalues.Taint{Key: t.GetKey(), Value: t.GetValue(), Effect: t.GetEffect()})
	}
	return ng
}

// specFromProto converts a checked ClusterSpec (see checkRequest).
func specFromProto(s *pb.ClusterSpec) clusters.Spec {
	spec := clusters.Spec{
		Cluster:  clusterFromProto(s.GetCluster()),
		Template: templateFromProto(s.GetClusterTemplate()),
	}
	for _, ng := range s.GetNodegroups() {
		spec.NodeGroups = append(spec.NodeGroups, nodeGroupFromProto(ng))
	}
	spec.CreatedAt, _ = parseTime(s.GetCluster().GetCreatedAt())
	spec.UpdatedAt, _ = parseTime(s.GetCluster().GetUpdatedAt())
	return spec
}

// parseTime reads Magnum's timestamps: RFC 3339, or Python's isoformat
// without a zone (Magnum stores UTC).
func parseTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999", "2006-01-02 15:04:05.999999", "2006-01-02T15:04:05"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a timestamp as Magnum writes them", s)
}

func authoritiesFromProto(c *pb.CertificateAuthorities) certs.Authorities {
	pair := func(k *pb.KeyPair) certs.KeyPair {
		return certs.KeyPair{Certificate: []byte(k.GetCertificate()), PrivateKey: []byte(k.GetPrivateKey())}
	}
	return certs.Authorities{
		CA: pair(c.GetCa()), EtcdCA: pair(c.GetEtcdCa()), FrontProxyCA: pair(c.GetFrontProxyCa()), ServiceAccount: pair(c.GetServiceAccount()),
	}
}

func statusToProto(r capistatus.Result) *pb.ClusterStatus {
	out := &pb.ClusterStatus{Status: r.Status, StatusReason: r.StatusReason, ApiAddress: r.APIAddress, CoeVersion: r.COEVersion}
	for _, ng := range r.NodeGroups {
		out.Nodegroups = append(out.Nodegroups, &pb.NodeGroupStatus{
			Uuid: ng.UUID, Name: ng.Name, Status: ng.Status, StatusReason: ng.StatusReason,
			NodeCount: int32(ng.NodeCount), NodeAddresses: ng.NodeAddresses, Destroy: ng.Destroy,
		})
	}
	return out
}
