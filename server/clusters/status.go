package clusters

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/magnum-capi/magnum-capi/capistatus"
	"github.com/magnum-capi/magnum-capi/helmvalues"
	"github.com/magnum-capi/magnum-capi/server/kube"
)

// Magnum statuses the service itself decides on.
const (
	statusDeleteComplete   = "DELETE_COMPLETE"
	statusDeleteInProgress = "DELETE_IN_PROGRESS"
	statusDeleteFailed     = "DELETE_FAILED"
)

// Status derives the Magnum status of one cluster from the watch cache. It
// makes no API request unless the cluster just finished deleting, when it
// removes the Secrets and the application credential the driver made.
func (s *Service) Status(ctx context.Context, spec Spec) (capistatus.Result, error) {
	if spec.Cluster.StackID == "" {
		if !strings.HasPrefix(spec.Cluster.Status, "DELETE_") {
			return s.statusWithoutRelease(spec), nil
		}
		if err := namedForDelete(&spec); err != nil {
			return capistatus.Result{}, err
		}
	}
	mc, err := s.place(ctx, spec)
	if err != nil {
		return capistatus.Result{}, err
	}
	ns := s.namespace(spec)
	objs, err := mc.Cache.Objects(ctx, ns, spec.Cluster.StackID)
	if err != nil {
		return capistatus.Result{}, err
	}
	s.noticeAdoption(ctx, spec, objs)
	snap, err := snapshot(objs)
	if err != nil {
		return capistatus.Result{}, err
	}
	req := s.statusRequest(spec, objs)
	if s.revisionBehind(spec, objs.Release) != "" && !strings.HasPrefix(spec.Cluster.Status, "CREATE_") {
		// The update's start is the new revision's creation, which the
		// cache has not seen: no clock rather than the previous revision's.
		req.OperationStarted = time.Time{}
	}
	res := capistatus.Derive(req, snap, s.cfg.Status)
	if completes(spec, res) {
		if waiting := s.cacheBehind(ctx, mc, ns, spec, objs.Release); waiting != "" {
			res = holdBack(spec, res, "waiting for: "+waiting)
		}
	}
	if res.Status == statusDeleteComplete {
		if err := s.cleanupDeleted(ctx, mc, ns, spec); err != nil {
			return deleteCleanupResult(res, err), nil
		}
		s.forgetApplied(spec.Cluster.StackID)
		s.deletes.forget(spec.Cluster.StackID)
	}
	return res, nil
}

// completes reports whether res moves the cluster or one of its node groups
// from in progress to complete: the answers the read-your-writes guard holds
// back while the cache is behind the sidecar's own last write. Deletions are
// not held: a stale cache can only still show what is being deleted.
func completes(spec Spec, res capistatus.Result) bool {
	if completion(spec.Cluster.Status, res.Status) {
		return true
	}
	for _, ng := range res.NodeGroups {
		if completion(nodeGroupStatus(spec, ng.UUID), ng.Status) {
			return true
		}
	}
	return false
}

// completion: from CREATE_, UPDATE_ or ROLLBACK_IN_PROGRESS to COMPLETE.
func completion(was, is string) bool {
	return strings.HasSuffix(was, "_IN_PROGRESS") && !strings.HasPrefix(was, "DELETE_") && strings.HasSuffix(is, "_COMPLETE")
}

// holdBack keeps the cluster and its node groups in progress, saying why.
func holdBack(spec Spec, res capistatus.Result, reason string) capistatus.Result {
	if completion(spec.Cluster.Status, res.Status) {
		res.Status, res.StatusReason = spec.Cluster.Status, reason
	}
	for i, ng := range res.NodeGroups {
		if was := nodeGroupStatus(spec, ng.UUID); completion(was, ng.Status) {
			res.NodeGroups[i].Status, res.NodeGroups[i].StatusReason = was, reason
		}
	}
	return res
}

func nodeGroupStatus(spec Spec, uuid string) string {
	for _, ng := range spec.NodeGroups {
		if ng.UUID == uuid {
			return ng.Status
		}
	}
	return ""
}

// statusWithoutRelease answers for a cluster that never got a release name:
// its create failed before naming it, so a delete has nothing to wait for.
func (s *Service) statusWithoutRelease(spec Spec) capistatus.Result {
	res := capistatus.Result{Status: spec.Cluster.Status, StatusReason: spec.Cluster.StatusReason}
	if strings.HasPrefix(spec.Cluster.Status, "DELETE_") {
		res.Status, res.StatusReason = statusDeleteComplete, ""
		for _, ng := range spec.NodeGroups {
			res.NodeGroups = append(res.NodeGroups, capistatus.NodeGroupResult{UUID: ng.UUID, Name: ng.Name, Status: statusDeleteComplete})
		}
	}
	return res
}

func (s *Service) statusRequest(spec Spec, objs *kube.Objects) capistatus.Request {
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
func snapshot(objs *kube.Objects) (capistatus.Snapshot, error) {
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
		// the addon Failed itself (kube.Objects.AddonFailedSince).
		if since, ok := objs.AddonFailedSince[objs.Addons[i].GetUID()]; ok {
			addon.FailedSince = since
		}
		snap.Addons = append(snap.Addons, addon)
	}
	return snap, nil
}

// cleanupDeleted removes what the driver made outside the release once
// Cluster API has deleted everything: the application credential (with the
// sidecar's own identity; the periodic sync has no user token) and every
// Secret labelled with the cluster's uuid (credentials and CAs, the StackHPC
// driver's included). It is idempotent: a later poll finds nothing left.
func (s *Service) cleanupDeleted(ctx context.Context, mc *ManagementCluster, ns string, spec Spec) error {
	id, err := s.credentialID(ctx, mc, ns, spec.Cluster.StackID)
	if err != nil {
		return err
	}
	if id != "" {
		if err := s.openstack.DeleteCredential(ctx, spec.Cluster, id); err != nil {
			return fmt.Errorf("deleting application credential %s: %w", id, err)
		}
	}
	n, err := mc.Kube.DeleteSecrets(ctx, ns, map[string]string{"magnum.openstack.org/cluster-uuid": spec.Cluster.UUID})
	if err != nil {
		return err
	}
	s.log.InfoContext(ctx, "cluster deleted; cleaned up", "stack_id", spec.Cluster.StackID, "secrets", n, "credential", id)
	return nil
}

// deleteCleanupResult keeps a cluster whose cleanup failed out of
// DELETE_COMPLETE (Magnum would then forget it and what leaked with it):
// in progress while the failure may pass, failed when it needs an operator.
func deleteCleanupResult(res capistatus.Result, err error) capistatus.Result {
	res.Status = statusDeleteInProgress
	var permanent interface{ FailedPrecondition() bool }
	if errors.As(err, &permanent) && permanent.FailedPrecondition() {
		res.Status = statusDeleteFailed
	}
	res.StatusReason = "Cluster API resources are gone, but cleaning up failed: " + err.Error()
	for i := range res.NodeGroups {
		res.NodeGroups[i].Status = res.Status
	}
	return res
}

// Health derives Magnum's health status from the watch cache.
func (s *Service) Health(ctx context.Context, spec Spec) (capistatus.Health, error) {
	if spec.Cluster.StackID == "" {
		return capistatus.Health{Status: "UNKNOWN", Reasons: map[string]string{"api": "the cluster has no release"}}, nil
	}
	mc, err := s.place(ctx, spec)
	if err != nil {
		return capistatus.Health{}, err
	}
	objs, err := mc.Cache.Objects(ctx, s.namespace(spec), spec.Cluster.StackID)
	if err != nil {
		return capistatus.Health{}, err
	}
	s.noticeAdoption(ctx, spec, objs)
	snap, err := snapshot(objs)
	if err != nil {
		return capistatus.Health{}, err
	}
	return capistatus.DeriveHealth(s.statusRequest(spec, objs), snap), nil
}
