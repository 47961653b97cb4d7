package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/magnum-capi/magnum-capi/capistatus"
	"github.com/magnum-capi/magnum-capi/helmvalues"
)

// magnumNodeGroup is one entry of --nodegroups: Magnum's field names, so that
// `openstack coe nodegroup list -f json` output can be given as it is (its
// other fields are ignored). chart_name is ours and optional.
type magnumNodeGroup struct {
	UUID         string `json:"uuid"`
	Name         string `json:"name"`
	Role         string `json:"role"`
	Status       string `json:"status"`
	StatusReason string `json:"status_reason"`
	IsDefault    bool   `json:"is_default"`
	NodeCount    int    `json:"node_count"`
	ChartName    string `json:"chart_name"`
}

// statusNodeGroups reads --nodegroups, or makes Magnum's default view: the
// control plane and one node group per MachineDeployment, all in the
// cluster's status (an upgrade moves every node group with the cluster).
func statusNodeGroups(path, clusterStatus, stackID string, snap capistatus.Snapshot) ([]capistatus.NodeGroup, error) {
	if path == "" {
		return defaultNodeGroups(clusterStatus, stackID, snap), nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--nodegroups: %w", err)
	}
	var in []magnumNodeGroup
	if err := json.Unmarshal(data, &in); err != nil {
		return nil, fmt.Errorf("--nodegroups %s: %w (expected a JSON list of node groups)", path, err)
	}
	out := make([]capistatus.NodeGroup, 0, len(in))
	for i, ng := range in {
		if ng.Name == "" {
			return nil, fmt.Errorf("--nodegroups %s: [%d].name: empty, expected the node group's name", path, i)
		}
		if !capistatus.IsKnownStatus(ng.Status) {
			return nil, fmt.Errorf("--nodegroups %s: [%d].status: %q, expected one of Magnum's statuses", path, i, ng.Status)
		}
		if ng.NodeCount < 0 {
			return nil, fmt.Errorf("--nodegroups %s: [%d].node_count: %d, expected 0 or more", path, i, ng.NodeCount)
		}
		role := ng.Role
		if role == "" {
			role = "worker"
		}
		chart := ng.ChartName
		if chart == "" && role != "master" {
			chart = helmvalues.NodeGroupName(stackID, ng.Name)
		}
		out = append(out, capistatus.NodeGroup{UUID: ng.UUID, Name: ng.Name, Role: role, Status: ng.Status,
			StatusReason: ng.StatusReason, IsDefault: ng.IsDefault, ChartName: chart, NodeCount: ng.NodeCount})
	}
	return out, nil
}

func defaultNodeGroups(status, stackID string, snap capistatus.Snapshot) []capistatus.NodeGroup {
	cp := capistatus.NodeGroup{Name: "default-master", Role: "master", Status: status, IsDefault: true}
	if k := snap.ControlPlane; k != nil && k.Spec.Replicas != nil {
		cp.NodeCount = int(*k.Spec.Replicas)
	}
	out := []capistatus.NodeGroup{cp}
	for _, md := range snap.MachineDeployments {
		name := md.Labels["capi.stackhpc.com/node-group"]
		if name == "" {
			name = strings.TrimPrefix(md.Name, stackID+"-")
		}
		ng := capistatus.NodeGroup{Name: name, Role: "worker", Status: status, IsDefault: name == "default-worker", ChartName: name}
		if md.Spec.Replicas != nil {
			ng.NodeCount = int(*md.Spec.Replicas)
		}
		out = append(out, ng)
	}
	return out
}
