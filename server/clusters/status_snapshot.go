package clusters

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/magnum-capi/magnum-capi/capistatus"
	"github.com/magnum-capi/magnum-capi/helmvalues"
	"github.com/magnum-capi/magnum-capi/server/watchcache"
)

// observation is what a status or health poll derives its answer from.
type observation struct {
	op   *operation
	objs *watchcache.Objects
	snap capistatus.Snapshot
}

// observe places the cluster, reads its objects from the watch cache,
// notices a release another driver installed (adoption.go) and makes
// capistatus's snapshot of them.
func (s *Service) observe(ctx context.Context, spec Spec) (observation, error) {
	op, err := s.at(ctx, spec)
	if err != nil {
		return observation{}, err
	}
	objs, err := op.mc.Cache.Objects(ctx, op.ns, op.stackID())
	if err != nil {
		return observation{}, err
	}
	s.noticeAdoption(ctx, spec, objs)
	snap, err := snapshot(objs)
	return observation{op: op, objs: objs, snap: snap}, err
}

func (s *Service) statusRequest(spec Spec, objs *watchcache.Objects) capistatus.Request {
	req := capistatus.Request{
		Status:            spec.Cluster.Status,
		StatusReason:      spec.Cluster.StatusReason,
		StackID:           spec.Cluster.StackID,
		ReleaseExists:     objs.Release.Exists,
		ReleaseWriting:    s.writing.of(writingKey(s.namespace(spec), spec.Cluster.StackID)) != nil,
		CurrentAPIAddress: spec.Cluster.APIAddress,
		CurrentCOEVersion: spec.Cluster.COEVersion,
		Now:               s.now(),
	}
	if spec.Cluster.CreateTimeout != nil {
		req.CreateTimeout = time.Duration(*spec.Cluster.CreateTimeout) * time.Minute
	}
	switch {
	case strings.HasPrefix(spec.Cluster.Status, "CREATE_"):
		req.OperationStarted = spec.CreatedAt
	case strings.HasPrefix(spec.Cluster.Status, "DELETE_"):
		req.OperationStarted = s.deletionStarted(spec.Cluster.StackID, objs, spec.UpdatedAt)
	default:
		// The newest release revision was written when the update began.
		req.OperationStarted = objs.Release.Created
		if req.OperationStarted.IsZero() {
			req.OperationStarted = spec.UpdatedAt
		}
	}
	for _, ng := range spec.NodeGroups {
		req.NodeGroups = append(req.NodeGroups, capistatus.NodeGroup{
			UUID: ng.UUID, Name: ng.Name, Role: ng.Role, Status: ng.Status, StatusReason: ng.StatusReason,
			IsDefault: ng.IsDefault, NodeCount: ng.NodeCount,
			ChartName: helmvalues.NodeGroupName(spec.Cluster.StackID, ng.Name),
		})
	}
	return req
}

// snapshot turns cached objects into capistatus's typed snapshot.
func snapshot(objs *watchcache.Objects) (capistatus.Snapshot, error) {
	snap := capistatus.Snapshot{
		Cluster:            objs.Cluster,
		ControlPlane:       objs.ControlPlane,
		MachineDeployments: objs.MachineDeployments,
		Machines:           objs.Machines,
		Servers:            objs.Servers,
	}
	snap.InfraCluster = objs.InfraCluster
	snap.Addons = make([]capistatus.Addon, 0, len(objs.Addons))
	for i := range objs.Addons {
		addon, err := capistatus.AddonFromObject(&objs.Addons[i])
		if err != nil {
			return snap, fmt.Errorf("%s %s: %w", objs.Addons[i].Kind, objs.Addons[i].Name, err)
		}
		// The cache strips managedFields, so it tracks when it first saw
		// the addon Failed itself (watchcache.Objects.AddonFailedSince).
		if since, ok := objs.AddonFailedSince[objs.Addons[i].GetUID()]; ok {
			addon.FailedSince = since
		}
		snap.Addons = append(snap.Addons, addon)
	}
	return snap, nil
}
