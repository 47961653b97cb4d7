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

// observe reads the cluster's objects from the watch cache, notices a
// release another driver installed (adoption.go) and makes capistatus's
// snapshot of them: what a status or health poll derives its answer from.
func (s *Service) observe(ctx context.Context, op *operation) (*watchcache.Objects, capistatus.Snapshot, error) {
	objs, err := op.mc.Cache.Objects(ctx, op.ns, op.stackID())
	if err != nil {
		return nil, capistatus.Snapshot{}, err
	}
	s.noticeAdoption(ctx, op.spec, objs)
	snap, err := snapshot(objs)
	return objs, snap, err
}

func (s *Service) statusRequest(spec Spec, objs *watchcache.Objects) capistatus.Request {
	req := capistatus.Request{
		Status:            spec.Cluster.Status,
		StatusReason:      spec.Cluster.StatusReason,
		StackID:           spec.Cluster.StackID,
		ReleaseExists:     objs.Release.Exists,
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
