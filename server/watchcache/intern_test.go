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
	intern.object(a)
	intern.object(b)
	if !reflect.DeepEqual(a, wantA) || !reflect.DeepEqual(b, wantB) {
		t.Fatalf("interning changed a value:\n%+v\n%+v", a, wantA)
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
	same("condition reason", a.Status.Conditions[0].Reason, b.Status.Conditions[0].Reason)
	same("v1beta1 message", a.Status.Deprecated.V1Beta1.Conditions[0].Message, b.Status.Deprecated.V1Beta1.Conditions[0].Message)

	// Bounded: past the limit nothing is added, and long strings never are.
	for i := range internMaxStrings + 10 {
		intern.str(fmt.Sprintf("s-%d", i))
	}
	intern.str(strings.Repeat("x", internMaxLen+1))
	if n := len(intern.strings); n != internMaxStrings {
		t.Errorf("%d strings kept, want the limit %d", n, internMaxStrings)
	}
}
