package capistatus

import (
	"errors"
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	controlplanev1beta1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta1"
	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// Groups and kinds of the objects a snapshot is made of.
var (
	gkCluster           = schema.GroupKind{Group: "cluster.x-k8s.io", Kind: "Cluster"}
	gkMachineDeployment = schema.GroupKind{Group: "cluster.x-k8s.io", Kind: "MachineDeployment"}
	gkMachine           = schema.GroupKind{Group: "cluster.x-k8s.io", Kind: "Machine"}
	gkControlPlane      = schema.GroupKind{Group: "controlplane.cluster.x-k8s.io", Kind: "KubeadmControlPlane"}
	gkInfraCluster      = schema.GroupKind{Group: "infrastructure.cluster.x-k8s.io", Kind: "OpenStackCluster"}
	gkServer            = schema.GroupKind{Group: "infrastructure.cluster.x-k8s.io", Kind: "OpenStackServer"}
	gkHelmRelease       = schema.GroupKind{Group: "addons.stackhpc.com", Kind: "HelmRelease"}
	gkManifests         = schema.GroupKind{Group: "addons.stackhpc.com", Kind: "Manifests"}
)

// Labels that tie an object to its cluster: CAPI's own, the chart's, and the
// addon provider's.
const (
	labelCAPICluster      = "cluster.x-k8s.io/cluster-name"
	labelChartCluster     = "capi.stackhpc.com/cluster"
	labelChartNodeGroup   = "capi.stackhpc.com/node-group"
	labelChartComponent   = "capi.stackhpc.com/component"
	labelAddonCluster     = "addons.stackhpc.com/cluster"
	labelCAPIDeployment   = "cluster.x-k8s.io/deployment-name"
	labelCAPIControlPlane = "cluster.x-k8s.io/control-plane"
)

// SnapshotFromObjects picks the objects of cluster stackID out of objs (which
// may hold other clusters' objects and unrelated kinds, which are ignored) and
// converts them to typed objects.
//
// Objects are matched by the rule the sidecar's watch cache indexes by
// (Membership, ClusterOf): the chart's cluster label, else the names,
// spec.clusterName and labels CAPI, CAPO and the addon provider give them;
// the KubeadmControlPlane and OpenStackCluster the Cluster refers to. Once
// the Cluster is found, only objects in its namespace count.
//
// CAPI objects may be v1beta2 (what the management cluster stores) or v1beta1;
// v1beta1 is converted with CAPI's generated conversions through scheme (the
// first one given, else a built-in scheme with the CAPI core and kubeadm
// control plane types). Every invalid object is reported, each error naming
// the object and the problem; errors answer InvalidArgument.
func SnapshotFromObjects(stackID string, objs []*unstructured.Unstructured, scheme ...*runtime.Scheme) (Snapshot, error) {
	if stackID == "" {
		return Snapshot{}, &InvalidRequestError{Field: "stack ID", Value: "", Expected: "the name of the cluster's Helm release"}
	}
	s := conversionScheme()
	if len(scheme) > 0 && scheme[0] != nil {
		s = scheme[0]
	}
	p := picker{stackID: stackID, member: MembershipOf(stackID, nil), scheme: s, seen: map[string]string{}}
	p.findCluster(objs)
	for _, o := range objs {
		p.add(o)
	}
	p.sort()
	return p.snap, errors.Join(p.errs...)
}

// picker accumulates one cluster's objects and every problem found.
type picker struct {
	stackID   string
	member    Membership // with the Cluster's references, once found
	scheme    *runtime.Scheme
	namespace string // the Cluster's, once found
	snap      Snapshot
	errs      []error
	seen      map[string]string // kind/namespace/name -> resourceVersion
}

// findCluster locates the Cluster first: its namespace and references decide
// which other objects belong to it.
func (p *picker) findCluster(objs []*unstructured.Unstructured) {
	for _, o := range objs {
		if o == nil || o.GroupVersionKind().GroupKind() != gkCluster || !p.member.Owns(gkCluster, o) || !p.markSeen(o) {
			continue
		}
		var c clusterv1.Cluster
		if !p.convertCAPI(o, &c, &clusterv1beta1.Cluster{}) {
			continue
		}
		if p.snap.Cluster != nil {
			p.errs = append(p.errs, p.objErr(o, errAmbiguous))
			continue
		}
		p.snap.Cluster = &c
		p.namespace = c.Namespace
	}
	p.member = MembershipOf(p.stackID, p.snap.Cluster)
}

// errAmbiguous: the same cluster's object found in two namespaces.
var errAmbiguous = errors.New("found in more than one namespace; give the objects of one namespace only")

// add converts o if it belongs to the cluster.
func (p *picker) add(o *unstructured.Unstructured) {
	if o == nil {
		return
	}
	gk := o.GroupVersionKind().GroupKind()
	// Helm's release records are the caller's to read (Request.ReleaseExists).
	if gk == gkCluster || gk == gkSecret || !p.mine(o, gk) {
		return
	}
	if !p.markSeen(o) {
		return
	}
	switch gk {
	case gkInfraCluster:
		if o.GetAPIVersion() != "infrastructure.cluster.x-k8s.io/v1beta1" {
			p.errs = append(p.errs, p.objErr(o, fmt.Errorf("apiVersion %q is not supported, expected infrastructure.cluster.x-k8s.io/v1beta1 (CAPO >= 0.10)", o.GetAPIVersion())))
			return
		}
		osc, err := OpenStackClusterFromUnstructured(o.Object)
		if err != nil {
			p.errs = append(p.errs, p.objErr(o, err))
			return
		}
		if p.snap.InfraCluster != nil {
			p.errs = append(p.errs, p.objErr(o, errAmbiguous))
			return
		}
		p.snap.InfraCluster = osc
	case gkControlPlane:
		var kcp controlplanev1.KubeadmControlPlane
		if !p.convertCAPI(o, &kcp, &controlplanev1beta1.KubeadmControlPlane{}) || !p.validReplicas(o, replicaFields{
			{"spec.replicas", kcp.Spec.Replicas}, {"status.replicas", kcp.Status.Replicas},
			{"status.readyReplicas", kcp.Status.ReadyReplicas}, {"status.availableReplicas", kcp.Status.AvailableReplicas},
			{"status.upToDateReplicas", kcp.Status.UpToDateReplicas},
		}) {
			return
		}
		if p.snap.ControlPlane != nil {
			p.errs = append(p.errs, p.objErr(o, errAmbiguous))
			return
		}
		p.snap.ControlPlane = &kcp
	case gkMachineDeployment:
		var md clusterv1.MachineDeployment
		if p.convertCAPI(o, &md, &clusterv1beta1.MachineDeployment{}) && p.validReplicas(o, replicaFields{
			{"spec.replicas", md.Spec.Replicas}, {"status.replicas", md.Status.Replicas},
			{"status.readyReplicas", md.Status.ReadyReplicas}, {"status.availableReplicas", md.Status.AvailableReplicas},
			{"status.upToDateReplicas", md.Status.UpToDateReplicas},
		}) {
			p.snap.MachineDeployments = append(p.snap.MachineDeployments, md)
		}
	case gkMachine:
		var m clusterv1.Machine
		if p.convertCAPI(o, &m, &clusterv1beta1.Machine{}) {
			p.snap.Machines = append(p.snap.Machines, m)
		}
	case gkServer:
		if o.GetAPIVersion() != "infrastructure.cluster.x-k8s.io/v1alpha1" {
			p.errs = append(p.errs, p.objErr(o, fmt.Errorf("apiVersion %q is not supported, expected infrastructure.cluster.x-k8s.io/v1alpha1 (CAPO >= 0.12)", o.GetAPIVersion())))
			return
		}
		s, err := OpenStackServerFromUnstructured(o.Object)
		if err != nil {
			p.errs = append(p.errs, p.objErr(o, err))
			return
		}
		p.snap.Servers = append(p.snap.Servers, *s)
	case gkHelmRelease, gkManifests:
		if o.GetAPIVersion() != "addons.stackhpc.com/v1alpha1" {
			p.errs = append(p.errs, p.objErr(o, fmt.Errorf("apiVersion %q is not supported, expected addons.stackhpc.com/v1alpha1", o.GetAPIVersion())))
			return
		}
		a, err := AddonFromUnstructured(o.Object)
		if err != nil {
			p.errs = append(p.errs, p.objErr(o, err))
			return
		}
		p.snap.Addons = append(p.snap.Addons, a)
	}
}

// mine reports whether o is one of this cluster's objects: in the Cluster's
// namespace, and one of the cluster's by its Membership.
func (p *picker) mine(o *unstructured.Unstructured, gk schema.GroupKind) bool {
	return (p.namespace == "" || o.GetNamespace() == p.namespace) && p.member.Owns(gk, o)
}

// markSeen records o and reports whether it is new. The same object twice (a
// list and a single-object file of one dump) is dropped; two different
// versions of one object make the snapshot ambiguous.
func (p *picker) markSeen(o *unstructured.Unstructured) bool {
	key := o.GroupVersionKind().Kind + "/" + o.GetNamespace() + "/" + o.GetName()
	rv, dup := p.seen[key]
	if !dup {
		p.seen[key] = o.GetResourceVersion()
		return true
	}
	if rv != o.GetResourceVersion() || rv == "" {
		p.errs = append(p.errs, p.objErr(o, fmt.Errorf("appears twice with different content (resourceVersion %q and %q); give one copy", rv, o.GetResourceVersion())))
	}
	return false
}

func (p *picker) objErr(o *unstructured.Unstructured, err error) error {
	return &ObjectError{Kind: o.GetKind(), Namespace: o.GetNamespace(), Name: o.GetName(), Err: err}
}

// sort orders lists by name, so results do not depend on input order.
func (p *picker) sort() { p.snap = p.snap.sorted() }

// sorted returns the snapshot with its lists in name order (copies; the
// caller's slices are not reordered). Derive and DeriveHealth sort first so
// that a watch cache handing out objects in any order gets the same reason
// every poll, and Magnum is not written to for nothing.
func (s Snapshot) sorted() Snapshot {
	s.MachineDeployments = append([]clusterv1.MachineDeployment(nil), s.MachineDeployments...)
	sort.SliceStable(s.MachineDeployments, func(i, j int) bool { return s.MachineDeployments[i].Name < s.MachineDeployments[j].Name })
	s.Machines = append([]clusterv1.Machine(nil), s.Machines...)
	sort.SliceStable(s.Machines, func(i, j int) bool { return s.Machines[i].Name < s.Machines[j].Name })
	s.Servers = append([]OpenStackServer(nil), s.Servers...)
	sort.SliceStable(s.Servers, func(i, j int) bool { return s.Servers[i].Name < s.Servers[j].Name })
	s.Addons = append([]Addon(nil), s.Addons...)
	sort.SliceStable(s.Addons, func(i, j int) bool {
		if s.Addons[i].Kind != s.Addons[j].Kind {
			return s.Addons[i].Kind < s.Addons[j].Kind
		}
		return s.Addons[i].Name < s.Addons[j].Name
	})
	return s
}
