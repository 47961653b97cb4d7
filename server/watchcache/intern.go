package watchcache

import (
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
)

// interner shares one copy of the strings that every cluster's objects
// repeat: label and annotation keys and the chart's label values, finalizers,
// condition types, statuses, reasons and messages. The JSON decoder gives
// each object its own copies; across thousands of clusters those copies
// were a large part of the watch cache (docs/benchmarks.md). Strings are
// immutable, so sharing changes no value.
type interner struct {
	mu      sync.Mutex
	strings map[string]string
}

func newInterner() *interner { return &interner{strings: map[string]string{}} }

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

func (t *interner) stringMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return m
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[t.str(k)] = t.str(v)
	}
	return out
}

// object interns obj's metadata and, for CAPI's kinds, its conditions.
func (t *interner) object(obj any) {
	if o, ok := obj.(metav1.Object); ok {
		o.SetLabels(t.stringMap(o.GetLabels()))
		o.SetAnnotations(t.stringMap(o.GetAnnotations()))
		f := o.GetFinalizers()
		for i := range f {
			f[i] = t.str(f[i])
		}
	}
	current, v1beta1 := conditionsOf(obj)
	if current != nil {
		*current = t.conditions(*current)
	}
	if v1beta1 != nil {
		*v1beta1 = t.v1beta1(*v1beta1)
	}
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

// conditions interns cs's strings and returns it without the spare
// capacity the decoder's appends left.
func (t *interner) conditions(cs []metav1.Condition) []metav1.Condition {
	cs = exact(cs)
	for i := range cs {
		c := &cs[i]
		c.Type, c.Reason, c.Message = t.str(c.Type), t.str(c.Reason), t.str(c.Message)
		c.Status = metav1.ConditionStatus(t.str(string(c.Status)))
	}
	return cs
}

func (t *interner) v1beta1(cs clusterv1.Conditions) clusterv1.Conditions {
	cs = exact(cs)
	for i := range cs {
		c := &cs[i]
		c.Type = clusterv1.ConditionType(t.str(string(c.Type)))
		c.Status = corev1.ConditionStatus(t.str(string(c.Status)))
		c.Severity = clusterv1.ConditionSeverity(t.str(string(c.Severity)))
		c.Reason, c.Message = t.str(c.Reason), t.str(c.Message)
	}
	return cs
}

// exact is s in an array of its length (a copy when s has spare capacity).
func exact[S ~[]E, E any](s S) S {
	if cap(s) == len(s) {
		return s
	}
	return slices.Clone(s)
}
