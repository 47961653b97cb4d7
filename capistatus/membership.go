package capistatus

import (
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// Which cluster an object belongs to: the one rule the sidecar's watch cache
// indexes its objects by (ClusterOf, after selecting them by ClusterLabel)
// and SnapshotFromObjects picks them by (Membership), so that the sidecar
// and `magnum-capi status` count the same objects as one cluster's.

// gkSecret: Helm's release records, Secrets labelled owner=helm whose "name"
// label is the release's, the cluster's stack id.
var gkSecret = schema.GroupKind{Kind: "Secret"}

const (
	labelHelmOwner   = "owner"
	labelHelmRelease = "name"
	// suffixControlPlane ends the chart's KubeadmControlPlane's name.
	suffixControlPlane = "-control-plane"
)

// ClusterLabel is the label naming the cluster of an object of kind gk,
// which a list or watch selects by: CAPI's cluster-name label on CAPO's
// OpenStackServers (CAPO labels them with nothing else), the release's name
// on Helm's release Secrets, the chart's cluster label on everything else.
// An object carrying it belongs to the cluster it names (ClusterOf).
func ClusterLabel(gk schema.GroupKind) string {
	switch gk {
	case gkServer:
		return labelCAPICluster
	case gkSecret:
		return labelHelmRelease
	}
	return labelChartCluster
}

// ClusterOf names the cluster (its stack id) an object of kind gk belongs
// to, given its name, labels and spec.clusterName ("" for kinds without
// one); "" when it names none. Its ClusterLabel decides; without it, a
// MachineDeployment or Machine belongs to its spec.clusterName, else to the
// cluster CAPI's cluster-name label names; an addon (HelmRelease,
// Manifests) to its spec.clusterName, else the addon provider's cluster
// label; a Cluster, OpenStackCluster or KubeadmControlPlane to the cluster
// its name is the chart's name of ("<stack id>", "<stack id>-control-plane").
// Helm's Secrets count only with owner=helm. Kinds status is not derived
// from belong to none.
func ClusterOf(gk schema.GroupKind, name string, labels map[string]string, clusterName string) string {
	switch gk {
	case gkServer:
		return labels[labelCAPICluster]
	case gkSecret:
		if labels[labelHelmOwner] != "helm" {
			return ""
		}
		return labels[labelHelmRelease]
	case gkCluster, gkInfraCluster, gkControlPlane, gkMachineDeployment, gkMachine, gkHelmRelease, gkManifests:
		if c := labels[labelChartCluster]; c != "" {
			return c
		}
		return clusterOfUnlabelled(gk, name, labels, clusterName)
	}
	return ""
}

// clusterOfUnlabelled is ClusterOf for an object of the chart's kinds
// without the chart's cluster label.
func clusterOfUnlabelled(gk schema.GroupKind, name string, labels map[string]string, clusterName string) string {
	switch gk {
	case gkMachineDeployment, gkMachine:
		return firstSet(clusterName, labels[labelCAPICluster])
	case gkHelmRelease, gkManifests:
		return firstSet(clusterName, labels[labelAddonCluster])
	case gkControlPlane:
		if c, ok := strings.CutSuffix(name, suffixControlPlane); ok {
			return c
		}
		return ""
	}
	return name // a Cluster or OpenStackCluster
}

// firstSet is a unless it is empty, else b.
func firstSet(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Membership says which objects are one cluster's: the KubeadmControlPlane
// and OpenStackCluster its Cluster refers to (when it refers to one; CAPI
// takes those, whatever their labels), and every other object ClusterOf
// assigns to it.
type Membership struct {
	stackID                    string
	controlPlane, infraCluster string // the Cluster's references; "" for none
}

// MembershipOf is the membership of cluster stackID; c is its Cluster, nil
// when there is none (yet).
func MembershipOf(stackID string, c *clusterv1.Cluster) Membership {
	m := Membership{stackID: stackID}
	if c == nil {
		return m
	}
	if ref := c.Spec.ControlPlaneRef; ref.Kind == gkControlPlane.Kind {
		m.controlPlane = ref.Name
	}
	if ref := c.Spec.InfrastructureRef; ref.Kind == gkInfraCluster.Kind {
		m.infraCluster = ref.Name
	}
	return m
}

// Owns reports whether an object of kind gk, with the given name, labels and
// spec.clusterName, is one of the cluster's.
func (m Membership) Owns(gk schema.GroupKind, name string, labels map[string]string, clusterName string) bool {
	switch {
	case gk == gkControlPlane && m.controlPlane != "":
		return name == m.controlPlane
	case gk == gkInfraCluster && m.infraCluster != "":
		return name == m.infraCluster
	}
	return ClusterOf(gk, name, labels, clusterName) == m.stackID
}
