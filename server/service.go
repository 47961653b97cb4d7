package server

import (
	"context"

	"github.com/magnum-capi/magnum-capi/capistatus"
	"github.com/magnum-capi/magnum-capi/certs"
	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
	"github.com/magnum-capi/magnum-capi/server/clusters"
)

// Clusters is what the service needs from the domain layer
// (*clusters.Service implements it).
type Clusters interface {
	Create(ctx context.Context, caller clusters.Caller, spec clusters.Spec, cas certs.Authorities) (string, error)
	Update(ctx context.Context, caller clusters.Caller, spec clusters.Spec, change clusters.Change) error
	Upgrade(ctx context.Context, caller clusters.Caller, spec clusters.Spec, opts clusters.UpgradeOptions) (string, error)
	Delete(ctx context.Context, caller clusters.Caller, spec clusters.Spec) error
	Status(ctx context.Context, spec clusters.Spec) (capistatus.Result, error)
	Health(ctx context.Context, spec clusters.Spec) (capistatus.Health, error)
	RotateCACertificate(ctx context.Context, caller clusters.Caller, spec clusters.Spec, cas certs.Authorities) error
	RotateCredential(ctx context.Context, caller clusters.Caller, spec clusters.Spec) error
	Preview(ctx context.Context, caller clusters.Caller, spec clusters.Spec) (clusters.Preview, error)
}

// Service implements DriverService. Each handler checks the request,
// converts it, calls Clusters and converts the answer; nothing else.
type Service struct {
	// Unsafe: adding an RPC to the proto without a handler here is a
	// compile error, not a silent Unimplemented.
	pb.UnsafeDriverServiceServer
	clusters Clusters
}

var _ pb.DriverServiceServer = (*Service)(nil)

// NewService returns the DriverService implementation over c.
func NewService(c Clusters) *Service { return &Service{clusters: c} }

func (s *Service) CreateCluster(ctx context.Context, req *pb.CreateClusterRequest) (*pb.CreateClusterResponse, error) {
	if err := checkRequest(req); err != nil {
		return nil, toStatus(err)
	}
	id, err := s.clusters.Create(ctx, callerFromProto(req.GetContext()), specFromProto(req.GetSpec()), authoritiesFromProto(req.GetCertificates()))
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.CreateClusterResponse{StackId: id}, nil
}

func (s *Service) UpdateCluster(ctx context.Context, req *pb.UpdateClusterRequest) (*pb.UpdateClusterResponse, error) {
	if err := checkRequest(req); err != nil {
		return nil, toStatus(err)
	}
	err := s.clusters.Update(ctx, callerFromProto(req.GetContext()), specFromProto(req.GetSpec()), clusters.Change{})
	return &pb.UpdateClusterResponse{}, toStatus(err)
}

func (s *Service) ResizeCluster(ctx context.Context, req *pb.ResizeClusterRequest) (*pb.ResizeClusterResponse, error) {
	if err := checkRequest(req); err != nil {
		return nil, toStatus(err)
	}
	err := s.clusters.Update(ctx, callerFromProto(req.GetContext()), specFromProto(req.GetSpec()),
		clusters.Change{NodeGroupUUID: req.GetNodegroupUuid(), RemoveNodes: req.GetNodesToRemove()})
	return &pb.ResizeClusterResponse{}, toStatus(err)
}

func (s *Service) UpgradeCluster(ctx context.Context, req *pb.UpgradeClusterRequest) (*pb.UpgradeClusterResponse, error) {
	if err := checkRequest(req); err != nil {
		return nil, toStatus(err)
	}
	version, err := s.clusters.Upgrade(ctx, callerFromProto(req.GetContext()), specFromProto(req.GetSpec()),
		clusters.UpgradeOptions{MaxBatchSize: int(req.GetMaxBatchSize()), NodeGroupUUID: req.GetNodegroupUuid()})
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.UpgradeClusterResponse{CoeVersion: version}, nil
}

func (s *Service) DeleteCluster(ctx context.Context, req *pb.DeleteClusterRequest) (*pb.DeleteClusterResponse, error) {
	if err := checkRequest(req); err != nil {
		return nil, toStatus(err)
	}
	err := s.clusters.Delete(ctx, callerFromProto(req.GetContext()), specFromProto(req.GetSpec()))
	return &pb.DeleteClusterResponse{}, toStatus(err)
}

// updateNodeGroup is shared by the three node group RPCs: each updates the
// cluster as Magnum now describes it. Their requests' rules (proto/) make
// uuid one of the spec's worker node groups.
func (s *Service) updateNodeGroup(ctx context.Context, rc *pb.RequestContext, spec *pb.ClusterSpec, uuid string) error {
	return s.clusters.Update(ctx, callerFromProto(rc), specFromProto(spec), clusters.Change{NodeGroupUUID: uuid})
}

func (s *Service) CreateNodeGroup(ctx context.Context, req *pb.CreateNodeGroupRequest) (*pb.CreateNodeGroupResponse, error) {
	if err := checkRequest(req); err != nil {
		return nil, toStatus(err)
	}
	return &pb.CreateNodeGroupResponse{}, toStatus(s.updateNodeGroup(ctx, req.GetContext(), req.GetSpec(), req.GetNodegroupUuid()))
}

func (s *Service) UpdateNodeGroup(ctx context.Context, req *pb.UpdateNodeGroupRequest) (*pb.UpdateNodeGroupResponse, error) {
	if err := checkRequest(req); err != nil {
		return nil, toStatus(err)
	}
	return &pb.UpdateNodeGroupResponse{}, toStatus(s.updateNodeGroup(ctx, req.GetContext(), req.GetSpec(), req.GetNodegroupUuid()))
}

func (s *Service) DeleteNodeGroup(ctx context.Context, req *pb.DeleteNodeGroupRequest) (*pb.DeleteNodeGroupResponse, error) {
	if err := checkRequest(req); err != nil {
		return nil, toStatus(err)
	}
	// The node group being deleted is in DELETE_IN_PROGRESS; the values
	// leave it out, so Helm removes its MachineDeployment.
	return &pb.DeleteNodeGroupResponse{}, toStatus(s.updateNodeGroup(ctx, req.GetContext(), req.GetSpec(), req.GetNodegroupUuid()))
}

func (s *Service) GetClusterStatus(ctx context.Context, req *pb.GetClusterStatusRequest) (*pb.GetClusterStatusResponse, error) {
	if err := checkRequest(req); err != nil {
		return nil, toStatus(err)
	}
	res, err := s.clusters.Status(ctx, specFromProto(req.GetSpec()))
	if err != nil {
		return nil, toStatus(err)
	}
	logRewritten(ctx, res)
	return &pb.GetClusterStatusResponse{Status: statusToProto(res)}, nil
}

func (s *Service) GetClusterHealth(ctx context.Context, req *pb.GetClusterHealthRequest) (*pb.GetClusterHealthResponse, error) {
	if err := checkRequest(req); err != nil {
		return nil, toStatus(err)
	}
	h, err := s.clusters.Health(ctx, specFromProto(req.GetSpec()))
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.GetClusterHealthResponse{HealthStatus: h.Status, HealthStatusReason: h.Reasons}, nil
}

func (s *Service) RotateCACertificate(ctx context.Context, req *pb.RotateCACertificateRequest) (*pb.RotateCACertificateResponse, error) {
	if err := checkRequest(req); err != nil {
		return nil, toStatus(err)
	}
	err := s.clusters.RotateCACertificate(ctx, callerFromProto(req.GetContext()), specFromProto(req.GetSpec()), authoritiesFromProto(req.GetCertificates()))
	return &pb.RotateCACertificateResponse{}, toStatus(err)
}

func (s *Service) RotateCredential(ctx context.Context, req *pb.RotateCredentialRequest) (*pb.RotateCredentialResponse, error) {
	if err := checkRequest(req); err != nil {
		return nil, toStatus(err)
	}
	err := s.clusters.RotateCredential(ctx, callerFromProto(req.GetContext()), specFromProto(req.GetSpec()))
	return &pb.RotateCredentialResponse{}, toStatus(err)
}

func (s *Service) RenderValues(ctx context.Context, req *pb.RenderValuesRequest) (*pb.RenderValuesResponse, error) {
	if err := checkRequest(req); err != nil {
		return nil, toStatus(err)
	}
	p, err := s.clusters.Preview(ctx, callerFromProto(req.GetContext()), specFromProto(req.GetSpec()))
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.RenderValuesResponse{ValuesYaml: p.ValuesYAML, Diff: p.Diff, Deployed: p.Deployed, ChartVersion: p.ChartVersion, Warnings: p.Warnings}, nil
}
