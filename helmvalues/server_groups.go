package helmvalues

// Nova server groups the driver makes for a cluster: one for the control
// plane and one per worker node group, with the server_group_policies
// label's policy, unless a server_group_id / control_plane_server_group_id
// label names an existing group. The sidecar finds or makes the groups by
// these names (Nova keeps no other mark on a group) and writes their ids
// with WithServerGroups.

// DefaultServerGroupPolicy is server_group_policies' default (VEXXHOST's).
const DefaultServerGroupPolicy = "soft-anti-affinity"

// ControlPlaneServerGroupName is the Nova name of the control plane's group:
// the KubeadmControlPlane's name.
func ControlPlaneServerGroupName(stackID string) string { return stackID + "-control-plane" }

// NodeGroupServerGroupName is the Nova name of a worker node group's group,
// by the node group's chart name (NodeGroupName): its MachineDeployment's
// name. The chart never names a node group control-plane, so the two
// kinds of name cannot collide.
func NodeGroupServerGroupName(stackID, chartName string) string { return stackID + "-" + chartName }

// ServerGroupIDs are the serverGroupId values of a cluster: the control
// plane's and the worker node groups' by chart name. "" is none.
type ServerGroupIDs struct {
	ControlPlane string
	NodeGroups   map[string]string
}

// ServerGroupSlots are the places in values that no label gave a server
// group: the control plane (when ControlPlane) and the worker node groups
// named, by chart name. A cluster-wide server_group_id fills every worker
// node group through nodeGroupDefaults.
func ServerGroupSlots(values map[string]any) (controlPlane bool, nodeGroups []string) {
	if id, _ := lookup(values, "controlPlane", "serverGroupId"); id == nil || id == "" {
		controlPlane = true
	}
	if id, _ := lookup(values, "nodeGroupDefaults", "serverGroupId"); id != nil && id != "" {
		return controlPlane, nil
	}
	list, _ := values["nodeGroups"].([]any)
	for _, item := range list {
		ng, _ := item.(map[string]any)
		name, _ := ng["name"].(string)
		if id, _ := ng["serverGroupId"].(string); name != "" && id == "" {
			nodeGroups = append(nodeGroups, name)
		}
	}
	return controlPlane, nodeGroups
}

// DeployedServerGroups reads the server group ids of deployed values (a
// release's): what the machines were made with.
func DeployedServerGroups(values map[string]any) ServerGroupIDs {
	ids := ServerGroupIDs{NodeGroups: map[string]string{}}
	if id, _ := lookup(values, "controlPlane", "serverGroupId"); id != nil {
		ids.ControlPlane, _ = id.(string)
	}
	defaults, _ := lookup(values, "nodeGroupDefaults", "serverGroupId")
	shared, _ := defaults.(string)
	list, _ := values["nodeGroups"].([]any)
	for _, item := range list {
		ng, _ := item.(map[string]any)
		name, _ := ng["name"].(string)
		if name == "" {
			continue
		}
		id, _ := ng["serverGroupId"].(string)
		if id == "" {
			id = shared
		}
		ids.NodeGroups[name] = id
	}
	return ids
}

// HasNodeGroup says whether deployed values have a worker node group of
// that chart name.
func (ids ServerGroupIDs) HasNodeGroup(name string) bool {
	_, ok := ids.NodeGroups[name]
	return ok
}

// Any says whether any place has a server group.
func (ids ServerGroupIDs) Any() bool {
	if ids.ControlPlane != "" {
		return true
	}
	for _, id := range ids.NodeGroups {
		if id != "" {
			return true
		}
	}
	return false
}

// WithServerGroups writes ids into the slots ServerGroupSlots found:
// the control plane's and each named worker node group's serverGroupId.
// Empty ids and node groups not in values are left alone.
func WithServerGroups(values map[string]any, ids ServerGroupIDs) {
	if ids.ControlPlane != "" {
		put(values, ids.ControlPlane, "controlPlane", "serverGroupId")
	}
	list, _ := values["nodeGroups"].([]any)
	for _, item := range list {
		ng, _ := item.(map[string]any)
		name, _ := ng["name"].(string)
		if id := ids.NodeGroups[name]; id != "" && ng != nil {
			ng["serverGroupId"] = id
		}
	}
}
