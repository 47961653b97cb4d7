package clusters

import (
	"context"
	"fmt"

	"github.com/magnum-capi/magnum-capi/helmvalues"
)

// Nova server groups the driver makes for a cluster (helmvalues'
// server_groups.go names them): one for the control plane and one per
// worker node group, unless a label names an existing group.
//
// When a group is made decides which machines use it, and a machine's
// serverGroupId never changes after (a new id replaces every machine of
// the control plane or node group):
//   - create_cluster makes the groups of every empty place (fresh);
//   - later operations (update, resize, upgrade, node group changes, CA
//     rotation) keep what the deployed release has: a place that had a group
//     keeps its id, one that had none stays without, and only a node group
//     the release does not have yet (create_nodegroup) gets a new one, and
//     only in a cluster that has server groups: a release with none at all
//     (a cluster made before the driver made groups, or adopted from another
//     driver) gets none for new node groups either;
//   - delete_nodegroup deletes the group after the release has dropped the
//     node group, delete_cluster all of them after uninstalling the release.

// serverGroupWork is what placeServerGroups decided: ids carried from the
// deployed release, and the places (Nova name → chart place) to find or make.
type serverGroupWork struct {
	ids     helmvalues.ServerGroupIDs
	ensure  map[string]string // Nova name → chart node group name ("" is the control plane)
	ordered []string          // ensure's names in a stable order
}

func (w *serverGroupWork) want(name, place string) {
	w.ensure[name] = place
	w.ordered = append(w.ordered, name)
}

// planServerGroups decides, from the rendered values and the deployed
// release's (nil when there is none), which places carry an id and which
// need a group. fresh is create_cluster: every empty place needs one.
func planServerGroups(stackID string, rendered, deployed map[string]any, fresh bool) serverGroupWork {
	w := serverGroupWork{ids: helmvalues.ServerGroupIDs{NodeGroups: map[string]string{}}, ensure: map[string]string{}}
	cp, slots := helmvalues.ServerGroupSlots(rendered)
	fresh = fresh || deployed == nil
	var before helmvalues.ServerGroupIDs
	if !fresh {
		before = helmvalues.DeployedServerGroups(deployed)
	}
	if cp {
		if fresh {
			w.want(helmvalues.ControlPlaneServerGroupName(stackID), "")
		} else {
			w.ids.ControlPlane = before.ControlPlane
		}
	}
	for _, ng := range slots {
		switch {
		case fresh:
			w.want(helmvalues.NodeGroupServerGroupName(stackID, ng), ng)
		case before.HasNodeGroup(ng):
			w.ids.NodeGroups[ng] = before.NodeGroups[ng]
		case before.Any():
			w.want(helmvalues.NodeGroupServerGroupName(stackID, ng), ng)
		}
	}
	return w
}

// placeServerGroups writes the cluster's server group ids into op's values:
// carried from the deployed release, or found or made in Nova as op.actor,
// in the cluster's project (planServerGroups decides which). The caller
// holds the cluster's Lease.
// A fresh placement (create_cluster) ignores the deployed release, so it
// does not wait for the history read: the release's own read comes after,
// beside the credential (create.go).
//
// Idempotent: groups are found by name before any is made, so a retry after
// a crash reuses the groups the first attempt made.
func (s *Service) placeServerGroups(ctx context.Context, op *operation, fresh bool) error {
	var deployed map[string]any
	if !fresh {
		prev, err := s.deployedRelease(ctx, op)
		if err != nil {
			return err
		}
		if prev != nil {
			deployed = prev.Values
		}
	}
	w := planServerGroups(op.stackID(), op.values.values, deployed, fresh)
	if len(w.ordered) > 0 {
		policy := op.values.serverGroupPolicy
		if policy == "" {
			policy = helmvalues.DefaultServerGroupPolicy
		}
		groups, err := s.openstack.EnsureServerGroups(ctx, op.actor, policy, w.ordered)
		if err != nil {
			return fmt.Errorf("server groups of cluster %s: %w", op.stackID(), errActingAs(op.actor, err))
		}
		for name, place := range w.ensure {
			if place == "" {
				w.ids.ControlPlane = groups[name].ID
			} else {
				w.ids.NodeGroups[place] = groups[name].ID
			}
		}
	}
	helmvalues.WithServerGroups(op.values.values, w.ids)
	return nil
}

// deletingServerGroups are the Nova names of the groups of the worker node
// groups Magnum is deleting (all, with everything, for delete_cluster).
func deletingServerGroups(spec Spec, everything bool) []string {
	var names []string
	if everything {
		names = append(names, helmvalues.ControlPlaneServerGroupName(spec.Cluster.StackID))
	}
	for _, ng := range spec.NodeGroups {
		if ng.Role == "master" {
			continue
		}
		if everything || ng.Status == statusDeleteInProgress || ng.Status == statusDeleteComplete {
			chart := helmvalues.NodeGroupName(spec.Cluster.StackID, ng.Name)
			names = append(names, helmvalues.NodeGroupServerGroupName(spec.Cluster.StackID, chart))
		}
	}
	return names
}

// deleteServerGroups deletes the groups the driver made for node groups
// being deleted (everything: for the whole cluster), as op.actor, in the
// cluster's project, once the release no longer has them. Only groups named
// as the driver names them are found, so a group a label named is never
// deleted. With no identity to act as (op.actor empty: a request from
// another project on a cluster without a credential) it deletes nothing and
// logs the names left behind.
//
// Idempotent: a group already gone is not an error; a retry finds none.
func (s *Service) deleteServerGroups(ctx context.Context, op *operation, everything bool) error {
	spec := op.spec
	names := deletingServerGroups(spec, everything)
	if len(names) == 0 {
		return nil
	}
	if op.actor.AuthToken == "" && len(op.actor.ClusterCloudsYAML) == 0 {
		s.log.WarnContext(ctx, "server groups left behind: no identity of the cluster's project to delete them with", "stack_id", spec.Cluster.StackID, "names", names)
		return nil
	}
	n, err := s.openstack.DeleteServerGroups(ctx, op.actor, names)
	if err != nil {
		return fmt.Errorf("deleting the server groups of cluster %s: %w", spec.Cluster.StackID, errActingAs(op.actor, err))
	}
	if n > 0 {
		s.log.InfoContext(ctx, "server groups deleted", "stack_id", spec.Cluster.StackID, "count", n)
	}
	return nil
}
