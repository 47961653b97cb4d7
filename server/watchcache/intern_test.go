package watchcache

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// TestInterner: the same strings of two clusters' objects share one copy,
// and no value changes.
func TestInterner(t *testing.T) {
	intern := newInterner()
	machine := func(cluster string) *clusterv1.Machine {
		m := &clusterv1.Machine{}
		m.Namespace = strings.Clone("magnum-project")
		m.Spec.InfrastructureRef = clusterv1.ContractVersionedObjectReference{APIGroup: strings.Clone("infrastructure.cluster.x-k8s.io"), Kind: strings.Clone("OpenStackMachine"), Name: cluster + "-1"}
		// Built at run time, as the decoder does: distinct copies.
		m.Labels = map[string]string{strings.Clone("cluster.x-k8s.io/cluster-name"): cluster, strings.Clone("capi.stackhpc.com/component"): strings.Clone("worker")}
		m.Finalizers = []string{strings.Clone("machine.cluster.x-k8s.io")}
		m.Status.Conditions = []metav1.Condition{{Type: strings.Clone("Ready"), Status: metav1.ConditionTrue, Reason: strings.Clone("Ready")}}
		m.Status.Deprecated = &clusterv1.MachineDeprecatedStatus{V1Beta1: &clusterv1.MachineV1Beta1DeprecatedStatus{
			Conditions: clusterv1.Conditions{{Type: "Ready", Status: "False", Severity: "Error", Reason: strings.Clone("InstanceError"), Message: strings.Clone("quota exceeded")}},
		}}
		return m
	}
	a, b := machine("alpha"), machine("beta")
	wantA, wantB := a.DeepCopy(), b.DeepCopy()
	// What status never reads is dropped: a condition's time and
	// observed generation. b's conditions are a's, from other times.
	b.Status.Conditions[0].LastTransitionTime = metav1.Now()
	b.Status.Conditions[0].ObservedGeneration = 3
	b.Status.Deprecated.V1Beta1.Conditions[0].LastTransitionTime = metav1.Now()
	intern.object(a)
	intern.object(b)
	if !reflect.DeepEqual(a, wantA) || !reflect.DeepEqual(b, wantB) {
		t.Fatalf("interning changed a value status reads:\n%+v\n%+v", b, wantB)
	}
	same := func(what, x, y string) {
		if unsafe.StringData(x) != unsafe.StringData(y) {
			t.Errorf("%s %q: two copies", what, x)
		}
	}
	keyOf := func(m map[string]string, k string) string {
		for key := range m {
			if key == k {
				return key
			}
		}
		return ""
	}
	same("label key", keyOf(a.Labels, "cluster.x-k8s.io/cluster-name"), keyOf(b.Labels, "cluster.x-k8s.io/cluster-name"))
	same("label value", a.Labels["capi.stackhpc.com/component"], b.Labels["capi.stackhpc.com/component"])
	same("finalizer", a.Finalizers[0], b.Finalizers[0])
	same("namespace", a.Namespace, b.Namespace)
	same("reference's API group", a.Spec.InfrastructureRef.APIGroup, b.Spec.InfrastructureRef.APIGroup)
	same("reference's kind", a.Spec.InfrastructureRef.Kind, b.Spec.InfrastructureRef.Kind)
	same("condition reason", a.Status.Conditions[0].Reason, b.Status.Conditions[0].Reason)
	same("v1beta1 message", a.Status.Deprecated.V1Beta1.Conditions[0].Message, b.Status.Deprecated.V1Beta1.Conditions[0].Message)

	// Equal conditions of two clusters' objects: one list.
	if &a.Status.Conditions[0] != &b.Status.Conditions[0] || &a.Status.Deprecated.V1Beta1.Conditions[0] != &b.Status.Deprecated.V1Beta1.Conditions[0] {
		t.Error("equal conditions of two objects are two lists")
	}
	failing := machine("alpha")
	failing.Status.Conditions[0].Status = metav1.ConditionFalse
	intern.object(failing)
	if failing.Status.Conditions[0].Status != metav1.ConditionFalse || &failing.Status.Conditions[0] == &a.Status.Conditions[0] {
		t.Error("a different condition list was given another's")
	}

	// The same labels on two objects of one cluster: one map.
	c := machine("alpha")
	intern.object(c)
	if reflect.ValueOf(c.Labels).UnsafePointer() != reflect.ValueOf(a.Labels).UnsafePointer() {
		t.Error("two objects with the same labels hold two maps")
	}
	if reflect.ValueOf(b.Labels).UnsafePointer() == reflect.ValueOf(a.Labels).UnsafePointer() {
		t.Error("objects of two clusters share one map of different labels")
	}

	// A different map with the same hash is not given out.
	mine := map[string]string{"a": strings.Clone("1")}
	other := map[string]string{"b": "2"}
	intern.sharedMaps[intern.mapHash(mine)] = other
	if got := intern.stringMap(mine); !reflect.DeepEqual(got, mine) {
		t.Errorf("stringMap(%v) = %v, a map with the same hash", mine, got)
	}

	// Bounded: a full table of maps starts again.
	for i := range internMaxShared + 10 {
		intern.stringMap(map[string]string{"n": fmt.Sprint(i)})
	}
	if n := len(intern.sharedMaps); n == 0 || n > internMaxShared {
		t.Errorf("%d maps kept, want 1..%d", n, internMaxShared)
	}

	// Bounded: past the limit nothing is added, and long strings never are.
	for i := range internMaxStrings + 10 {
		intern.str(fmt.Sprintf("s-%d", i))
	}
	intern.str(strings.Repeat("x", internMaxLen+1))
	if n := len(intern.strings); n != internMaxStrings {
		t.Errorf("%d strings kept, want the limit %d", n, internMaxStrings)
	}
}
