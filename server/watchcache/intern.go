package watchcache

import (
	"hash/maphash"
	"maps"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// Bounds of the interner: strings longer than internMaxLen are rarely
// shared; past internMaxStrings new strings are no longer added, so the
// table stays small whatever the number of clusters (its first entries are
// the vocabulary every cluster repeats).
const (
	internMaxLen     = 256
	internMaxStrings = 16384
	// internMaxShared bounds each table of shared maps and condition
	// lists. Unlike strings, whose first entries are every cluster's
	// vocabulary, many of these belong to one cluster, so a full table is
	// emptied and filled again by what is seen next: what is already
	// shared stays shared, and clusters that come and go cannot leave the
	// table full of values nobody holds any more.
	internMaxShared = 16384
)

// interner shares one copy of the strings that every cluster's objects
// repeat: label and annotation keys and the chart's label values, finalizers,
// condition types, statuses, reasons and messages, the API groups and kinds
// of references, namespaces and the cache's index keys. The JSON decoder gives
// each object its own copies; across thousands of clusters those copies
// were a large part of the watch cache (docs/benchmarks.md). Strings are
// immutable, so sharing changes no value.
//
// Whole label and annotation maps and condition lists are shared too. The
// labels kept on a cluster's objects (trim.go) are mostly the same two or
// three sets, and a Go map costs about 300 bytes however few entries it
// holds: at 2,000 clusters one map per object was 17 MB of the cache's
// 91 MB. Healthy objects of one kind carry the same conditions in every
// cluster once the fields status never reads (a condition's time and
// observed generation) are dropped. Shared values are read-only, as every
// cached object already is.
type interner struct {
	mu      sync.Mutex
	strings map[string]string
	seed    maphash.Seed
	// Shared values by the hash of their contents; a different value with
	// the same hash is simply not shared.
	sharedMaps       map[uint64]map[string]string
	sharedConditions map[uint64][]metav1.Condition
	sharedV1beta1    map[uint64]clusterv1.Conditions
	// sharedNames: namespaces (every object of a project's namespace names
	// it) and index keys (one a cluster, the same for every kind), of which
	// there can be more than the strings table takes.
	sharedNames map[uint64]string
}

func newInterner() *interner {
	return &interner{strings: map[string]string{}, seed: maphash.MakeSeed(),
		sharedMaps: map[uint64]map[string]string{}, sharedConditions: map[uint64][]metav1.Condition{}, sharedV1beta1: map[uint64]clusterv1.Conditions{},
		sharedNames: map[uint64]string{}}
}

func (t *interner) str(s string) string {
	if s == "" || len(s) > internMaxLen {
		return s
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if shared, ok := t.strings[s]; ok {
		return shared
	}
	if len(t.strings) < internMaxStrings {
		t.strings[s] = s
	}
	return s
}

// shared is the value of table under hash h when it equals v; otherwise v,
// which own makes into the copy to keep (interned strings, no spare
// capacity) and which is kept for the values that follow when h is free.
func shared[V any](t *interner, table map[uint64]V, h uint64, v V, equal func(V, V) bool, own func(V) V) V {
	t.mu.Lock()
	have, ok := table[h]
	t.mu.Unlock()
	if ok && equal(have, v) {
		return have
	}
	v = own(v)
	if ok {
		return v // another value has this hash: not shared
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(table) >= internMaxShared {
		clear(table)
	}
	if have, ok := table[h]; ok {
		if equal(have, v) {
			return have // the same value, kept meanwhile
		}
		return v
	}
	table[h] = v
	return v
}

// stringMap is m's shared copy: the map already kept with the same
// entries, or a new one of interned strings that later equal maps share.
func (t *interner) stringMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return m
	}
	return shared(t, t.sharedMaps, t.mapHash(m), m, maps.Equal, func(m map[string]string) map[string]string {
		out := make(map[string]string, len(m))
		for k, v := range m {
			out[t.str(k)] = t.str(v)
		}
		return out
	})
}

// name is n's shared copy, for namespaces and index keys.
func (t *interner) name(n string) string {
	if n == "" {
		return n
	}
	same := func(a, b string) bool { return a == b }
	return shared(t, t.sharedNames, maphash.String(t.seed, n), n, same, func(s string) string { return s })
}

// mapHash hashes m's entries in any order (a sum of each entry's hash).
func (t *interner) mapHash(m map[string]string) uint64 {
	var h maphash.Hash
	h.SetSeed(t.seed)
	var sum uint64
	for k, v := range m {
		h.Reset()
		writeStrings(&h, k, v)
		sum += h.Sum64()
	}
	return sum
}

// writeStrings hashes each string and a separator after it.
func writeStrings(h *maphash.Hash, ss ...string) {
	for _, s := range ss {
		_, _ = h.WriteString(s)
		_ = h.WriteByte(0)
	}
}

// object interns obj's metadata and, for CAPI's kinds, its conditions.
func (t *interner) object(obj any) {
	if o, ok := obj.(metav1.Object); ok {
		o.SetNamespace(t.name(o.GetNamespace()))
		o.SetLabels(t.stringMap(o.GetLabels()))
		o.SetAnnotations(t.stringMap(o.GetAnnotations()))
		f := o.GetFinalizers()
		for i := range f {
			f[i] = t.str(f[i])
		}
	}
	for _, ref := range refsOf(obj) {
		ref.APIGroup, ref.Kind = t.str(ref.APIGroup), t.str(ref.Kind)
	}
	current, v1beta1 := conditionsOf(obj)
	if current != nil {
		*current = t.conditions(*current)
	}
	if v1beta1 != nil {
		*v1beta1 = t.v1beta1(*v1beta1)
	}
}

// refsOf locates the references to other objects of CAPI's kinds, whose
// API groups and kinds every cluster repeats.
func refsOf(obj any) []*clusterv1.ContractVersionedObjectReference {
	switch o := obj.(type) {
	case *clusterv1.Cluster:
		return []*clusterv1.ContractVersionedObjectReference{&o.Spec.InfrastructureRef, &o.Spec.ControlPlaneRef}
	case *controlplanev1.KubeadmControlPlane:
		return []*clusterv1.ContractVersionedObjectReference{&o.Spec.MachineTemplate.Spec.InfrastructureRef}
	case *clusterv1.MachineDeployment:
		return []*clusterv1.ContractVersionedObjectReference{&o.Spec.Template.Spec.InfrastructureRef}
	case *clusterv1.Machine:
		return []*clusterv1.ContractVersionedObjectReference{&o.Spec.InfrastructureRef}
	}
	return nil
}

// conditionsOf locates a cached object's conditions: CAPI's v1beta2 ones
// and the deprecated v1beta1 ones it still writes, or CAPO's; nil where the
// kind has none or the object has not got them.
func conditionsOf(obj any) (current *[]metav1.Condition, v1beta1 *clusterv1.Conditions) {
	switch o := obj.(type) {
	case *clusterv1.Cluster:
		if d := o.Status.Deprecated; d != nil && d.V1Beta1 != nil {
			v1beta1 = &d.V1Beta1.Conditions
		}
		return &o.Status.Conditions, v1beta1
	case *controlplanev1.KubeadmControlPlane:
		if d := o.Status.Deprecated; d != nil && d.V1Beta1 != nil {
			v1beta1 = &d.V1Beta1.Conditions
		}
		return &o.Status.Conditions, v1beta1
	case *clusterv1.MachineDeployment:
		if d := o.Status.Deprecated; d != nil && d.V1Beta1 != nil {
			v1beta1 = &d.V1Beta1.Conditions
		}
		return &o.Status.Conditions, v1beta1
	case *clusterv1.Machine:
		if d := o.Status.Deprecated; d != nil && d.V1Beta1 != nil {
			v1beta1 = &d.V1Beta1.Conditions
		}
		return &o.Status.Conditions, v1beta1
	case *OpenStackCluster:
		return nil, &o.Status.Conditions
	case *OpenStackServer:
		return nil, &o.Status.Conditions
	}
	return nil, nil
}

// conditions is cs without what status never reads (capistatus reads a
// condition's type, status, reason and message), shared with every equal
// list, its strings interned and without the spare capacity the decoder's
// appends left.
func (t *interner) conditions(cs []metav1.Condition) []metav1.Condition {
	if len(cs) == 0 {
		return cs
	}
	var h maphash.Hash
	h.SetSeed(t.seed)
	for i := range cs {
		c := &cs[i]
		c.LastTransitionTime, c.ObservedGeneration = metav1.Time{}, 0
		writeStrings(&h, c.Type, string(c.Status), c.Reason, c.Message)
	}
	return shared(t, t.sharedConditions, h.Sum64(), cs, slices.Equal, func(cs []metav1.Condition) []metav1.Condition {
		cs = exact(cs)
		for i := range cs {
			c := &cs[i]
			c.Type, c.Reason, c.Message = t.str(c.Type), t.str(c.Reason), t.str(c.Message)
			c.Status = metav1.ConditionStatus(t.str(string(c.Status)))
		}
		return cs
	})
}

// v1beta1 is conditions for the deprecated v1beta1 list, whose severity
// status reads too.
func (t *interner) v1beta1(cs clusterv1.Conditions) clusterv1.Conditions {
	if len(cs) == 0 {
		return cs
	}
	var h maphash.Hash
	h.SetSeed(t.seed)
	for i := range cs {
		c := &cs[i]
		c.LastTransitionTime = metav1.Time{}
		writeStrings(&h, string(c.Type), string(c.Status), string(c.Severity), c.Reason, c.Message)
	}
	return shared(t, t.sharedV1beta1, h.Sum64(), cs, slices.Equal, func(cs clusterv1.Conditions) clusterv1.Conditions {
		cs = exact(cs)
		for i := range cs {
			c := &cs[i]
			c.Type = clusterv1.ConditionType(t.str(string(c.Type)))
			c.Status = corev1.ConditionStatus(t.str(string(c.Status)))
			c.Severity = clusterv1.ConditionSeverity(t.str(string(c.Severity)))
			c.Reason, c.Message = t.str(c.Reason), t.str(c.Message)
		}
		return cs
	})
}

// exact is s in an array of its length (a copy when s has spare capacity).
func exact[S ~[]E, E any](s S) S {
	if cap(s) == len(s) {
		return s
	}
	return slices.Clone(s)
}
