package capistatus

import (
	"cmp"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// The one rule for which objects are a cluster's: the watch cache selects by
// ClusterLabel and indexes by ClusterOf, SnapshotFromObjects picks by
// Membership, so both count the same objects as one cluster's.

// gkSecret: Helm's release records (labels owner=helm, name=<release>).
var gkSecret = schema.GroupKind{Kind: "Secret"}

// ClusterLabel is the label naming the cluster of an object of kind gk,
// which lists and watches select by: CAPI's on CAPO's OpenStackServers (CAPO
// sets no other), the release's name on Helm's Secrets, else the chart's.
func ClusterLabel(gk schema.GroupKind) string {
	switch gk {
	case gkServer:
		return labelCAPICluster
	case gkSecret:
		return "name"
	}
	return labelChartCluster
}

// ClusterOf names the cluster (stack id) obj, of kind gk, belongs to; ""
// for none. Its ClusterLabel decides; without it a MachineDeployment or
// Machine belongs to its spec.clusterName, else to CAPI's cluster label; an
// addon to its spec.clusterName, else to the addon provider's label; a
// Cluster or OpenStackCluster to its name; a KubeadmControlPlane to the
// "<stack id>" of its name "<stack id>-control-plane". Helm's Secrets
// count with owner=helm only; kinds status is not derived from, never.
func ClusterOf(gk schema.GroupKind, obj metav1.Object) string {
	labels := obj.GetLabels()
	chart := labels[labelChartCluster]
	switch gk {
	case gkServer:
		return labels[labelCAPICluster]
	case gkSecret:
		if labels["owner"] != "helm" {
			return ""
		}
		return labels["name"]
	case gkMachineDeployment, gkMachine:
		return cmp.Or(chart, specClusterName(obj), labels[labelCAPICluster])
	case gkHelmRelease, gkManifests:
		return cmp.Or(chart, specClusterName(obj), labels[labelAddonCluster])
	case gkCluster, gkInfraCluster:
		return cmp.Or(chart, obj.GetName())
	case gkControlPlane:
		if stackID, ok := strings.CutSuffix(obj.GetName(), "-control-plane"); ok {
			return cmp.Or(chart, stackID)
		}
		return chart
	}
	return ""
}

// specClusterName is obj's spec.clusterName: of an unstructured object, a
// CAPI MachineDeployment or Machine, or an AddonObject (or a type embedding
// one, as the watch cache's do).
func specClusterName(obj metav1.Object) string {
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		name, _, _ := unstructured.NestedString(o.Object, "spec", "clusterName")
		return name
	case *clusterv1.MachineDeployment:
		return o.Spec.ClusterName
	case *clusterv1.Machine:
		return o.Spec.ClusterName
	case interface{ addonSpec() AddonSpec }:
		return o.addonSpec().ClusterName
	}
	return ""
}

func (o *AddonObject) addonSpec() AddonSpec { return o.Spec }

// Membership says which objects are one cluster's: the KubeadmControlPlane
// and OpenStackCluster its Cluster refers to, whatever their labels (CAPI
// reconciles those), and every other object ClusterOf assigns to it.
type Membership struct {
	stackID                    string
	controlPlane, infraCluster string // the Cluster's references; "" for none
}

// MembershipOf is the membership of cluster stackID whose Cluster is c (nil:
// none found).
func MembershipOf(stackID string, c *clusterv1.Cluster) Membership {
	m := Membership{stackID: stackID}
	if c != nil && c.Spec.ControlPlaneRef.Kind == gkControlPlane.Kind {
		m.controlPlane = c.Spec.ControlPlaneRef.Name
	}
	if c != nil && c.Spec.InfrastructureRef.Kind == gkInfraCluster.Kind {
		m.infraCluster = c.Spec.InfrastructureRef.Name
	}
	return m
}

// Owns reports whether obj, of kind gk, is one of the cluster's.
func (m Membership) Owns(gk schema.GroupKind, obj metav1.Object) bool {
	switch {
	case gk == gkControlPlane && m.controlPlane != "":
		return obj.GetName() == m.controlPlane
	case gk == gkInfraCluster && m.infraCluster != "":
		return obj.GetName() == m.infraCluster
	}
	return ClusterOf(gk, obj) == m.stackID
}
