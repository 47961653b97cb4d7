package clusters

import (
	"context"
	"strings"
	"time"

	"github.com/magnum-capi/magnum-capi/capistatus"
)

// Magnum statuses the service itself decides on.
const (
	statusDeleteComplete   = "DELETE_COMPLETE"
	statusDeleteInProgress = "DELETE_IN_PROGRESS"
	statusDeleteFailed     = "DELETE_FAILED"
)

// Status derives the Magnum status of one cluster from the watch cache. It
// writes nothing, and makes no API request unless the cluster just
// finished deleting, when it reads what the garbage collector has still to
// delete (status_leftovers.go) and whether the cleanup reconciler has
// finished (cleanup_marker.go), or a write of this sidecar's is not in the
// cache yet (status_guard.go). What is to be written on a poll's account
// (the Argo CD hand-off, a deletion's cleanup) is offered to the
// reconcilers in memory (reconciler.go).
func (s *Service) Status(ctx context.Context, spec Spec) (capistatus.Result, error) {
	if spec.Cluster.StackID == "" {
		if !strings.HasPrefix(spec.Cluster.Status, "DELETE_") {
			return withLabelNotes(spec, s.statusWithoutRelease(spec)), nil
		}
		if err := namedForDelete(&spec); err != nil {
			return capistatus.Result{}, err
		}
	}
	o, err := s.observe(ctx, spec)
	if err != nil {
		return capistatus.Result{}, err
	}
	req := s.statusRequest(spec, o.objs)
	if s.revisionBehind(spec, o.objs.Release) != "" && !strings.HasPrefix(spec.Cluster.Status, "CREATE_") {
		// The update's start is the new revision's creation, which the
		// cache has not seen: no clock rather than the previous revision's.
		req.OperationStarted = time.Time{}
	}
	res := capistatus.Derive(req, o.snap, s.cfg.Status)
	if completes(spec, res) {
		if waiting := s.cacheBehind(ctx, o.op, o.objs.Release); waiting != "" {
			res = holdBack(spec, res, "waiting for: "+waiting)
		}
	}
	if res.Status == statusDeleteComplete {
		res = s.withLeftovers(ctx, o, req, res)
	}
	if res.Status == statusDeleteComplete {
		left, err := s.cleanupLeft(ctx, o.op)
		if err != nil {
			return deleteCleanupResult(res, err), nil
		}
		if res = withCleanup(res, left); left == nil {
			s.forgetDeployed(spec.Cluster.StackID)
			s.deletes.forget(spec.Cluster.StackID)
		}
	}
	s.offerHandOff(o, res.Status)
	return onlyNewDetail(spec, withLabelNotes(spec, res)), nil
}

// onlyNewDetail drops the operator's detail behind a status_reason Magnum
// already holds (label notes included, which capistatus does not see): the
// sidecar logs it when the reason changes, not on every poll.
func onlyNewDetail(spec Spec, res capistatus.Result) capistatus.Result {
	if res.StatusReason == spec.Cluster.StatusReason {
		res.Rewritten = nil
	}
	return res
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
