package capisim

import (
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

func TestTemplateOutdated(t *testing.T) {
	base := clusterv1.MachineTemplateSpec{Spec: clusterv1.MachineSpec{
		Version:           "v1.29.2",
		Bootstrap:         clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{Kind: "KubeadmConfigTemplate", Name: "kct-1"}},
		InfrastructureRef: clusterv1.ContractVersionedObjectReference{Kind: "OpenStackMachineTemplate", Name: "osmt-1"},
	}}
	tests := []struct {
		name   string
		change func(*clusterv1.MachineTemplateSpec)
		want   []string
	}{
		{"same", func(*clusterv1.MachineTemplateSpec) {}, nil},
		{"labels do not count", func(s *clusterv1.MachineTemplateSpec) { s.Labels = map[string]string{"a": "b"} }, nil},
		{"version", func(s *clusterv1.MachineTemplateSpec) { s.Spec.Version = "v1.30.0" }, []string{"Version v1.29.2, v1.30.0 required"}},
		{"templates", func(s *clusterv1.MachineTemplateSpec) {
			s.Spec.Bootstrap.ConfigRef.Name = "kct-2"
			s.Spec.InfrastructureRef.Name = "osmt-2"
		}, []string{"KubeadmConfig is not up-to-date", "OpenStackMachine is not up-to-date"}},
		{"failure domain", func(s *clusterv1.MachineTemplateSpec) { s.Spec.FailureDomain = "az2" }, []string{"Failure domain , az2 required"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			desired := *base.DeepCopy()
			tt.change(&desired)
			if got := templateOutdated(&base, &desired); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestRolloutLimits(t *testing.T) {
	tests := []struct {
		name                   string
		surge, unavailable     *intstr.IntOrString
		desired                int32
		wantSurge, wantUnavail int32
	}{
		{"chart's node groups", ptrTo(intstr.FromInt32(0)), ptrTo(intstr.FromInt32(1)), 3, 0, 1},
		{"CAPI defaults", nil, nil, 3, 1, 0},
		{"both zero becomes one unavailable", ptrTo(intstr.FromInt32(0)), ptrTo(intstr.FromInt32(0)), 3, 0, 1},
		{"percentages", ptrTo(intstr.FromString("25%")), ptrTo(intstr.FromString("25%")), 5, 2, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			md := &clusterv1.MachineDeployment{}
			md.Spec.Rollout.Strategy.RollingUpdate = clusterv1.MachineDeploymentRolloutStrategyRollingUpdate{MaxSurge: tt.surge, MaxUnavailable: tt.unavailable}
			s, u := rolloutLimits(md, tt.desired)
			if s != tt.wantSurge || u != tt.wantUnavail {
				t.Errorf("got surge %d unavailable %d, want %d %d", s, u, tt.wantSurge, tt.wantUnavail)
			}
		})
	}
}

func machineSet(name string, spec, available int32) *clusterv1.MachineSet {
	ms := &clusterv1.MachineSet{ObjectMeta: metav1.ObjectMeta{Name: name}}
	ms.Spec.Replicas = ptrTo(spec)
	ms.Status.AvailableReplicas = ptrTo(available)
	return ms
}

// TestScaleDownOld walks a rolling update of 2 replicas with maxSurge 0
// and maxUnavailable 1, the chart's node group strategy.
func TestScaleDownOld(t *testing.T) {
	tests := []struct {
		name      string
		old       []*clusterv1.MachineSet
		newMS     *clusterv1.MachineSet
		wantMS    string
		wantTo    int32
		wantScale bool
	}{
		{"start: one old replica may go", []*clusterv1.MachineSet{machineSet("old", 2, 2)}, machineSet("new", 0, 0), "old", 1, true},
		{"new one not ready yet: wait", []*clusterv1.MachineSet{machineSet("old", 1, 1)}, machineSet("new", 1, 0), "", 0, false},
		{"new one ready: the last old goes", []*clusterv1.MachineSet{machineSet("old", 1, 1)}, machineSet("new", 1, 1), "old", 0, true},
		{"unavailable old replicas go first", []*clusterv1.MachineSet{machineSet("a", 1, 1), machineSet("b", 1, 0)}, machineSet("new", 0, 0), "b", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var allSpec, allAvailable int32
			for _, ms := range append(append([]*clusterv1.MachineSet(nil), tt.old...), tt.newMS) {
				allSpec += *ms.Spec.Replicas
				allAvailable += *ms.Status.AvailableReplicas
			}
			ms, to, ok := scaleDownOld(tt.old, 2, 1, allSpec, allAvailable, tt.newMS)
			if ok != tt.wantScale {
				t.Fatalf("scale %v, want %v", ok, tt.wantScale)
			}
			if ok && (ms.Name != tt.wantMS || to != tt.wantTo) {
				t.Errorf("scales %s to %d, want %s to %d", ms.Name, to, tt.wantMS, tt.wantTo)
			}
		})
	}
}

func TestDefaultReplicas(t *testing.T) {
	autoscaled := map[string]string{
		clusterv1.AutoscalerMinSizeAnnotation: "2", clusterv1.AutoscalerMaxSizeAnnotation: "5",
	}
	tests := []struct {
		name        string
		annotations map[string]string
		current     *int32
		want        int32
	}{
		{"no annotations", nil, nil, 1},
		{"new autoscaled group starts at min", autoscaled, nil, 2},
		{"below min goes to min", autoscaled, ptrTo[int32](1), 2},
		{"within range stays", autoscaled, ptrTo[int32](4), 4},
		{"above max goes to max", autoscaled, ptrTo[int32](9), 5},
		{"one annotation is not enough", map[string]string{clusterv1.AutoscalerMinSizeAnnotation: "3"}, nil, 1},
		{"unparsable", map[string]string{clusterv1.AutoscalerMinSizeAnnotation: "x", clusterv1.AutoscalerMaxSizeAnnotation: "5"}, nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			md := &clusterv1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{Annotations: tt.annotations}}
			md.Status.Replicas = tt.current
			if got := defaultReplicas(md); got != tt.want {
				t.Errorf("got %d, want %d", got, tt.want)
			}
		})
	}
}

func TestDefaultMachineDeployment(t *testing.T) {
	md := &clusterv1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{Name: "c-ng"}}
	md.Spec.ClusterName = "c"
	md.Spec.Template.Spec.Version = "1.29.2"
	if !defaultMachineDeployment(md) {
		t.Fatal("nothing defaulted")
	}
	if *md.Spec.Replicas != 1 || md.Spec.Template.Spec.Version != "v1.29.2" || md.Labels[clusterv1.ClusterNameLabel] != "c" {
		t.Errorf("defaulted %+v", md)
	}
	wantLabels := map[string]string{clusterv1.ClusterNameLabel: "c", clusterv1.MachineDeploymentNameLabel: "c-ng"}
	if !reflect.DeepEqual(md.Spec.Selector.MatchLabels, wantLabels) || !reflect.DeepEqual(md.Spec.Template.Labels, wantLabels) {
		t.Errorf("selector %v template labels %v", md.Spec.Selector.MatchLabels, md.Spec.Template.Labels)
	}
	if defaultMachineDeployment(md) {
		t.Error("defaulting twice changes something")
	}
}

func TestDeletionOrder(t *testing.T) {
	at := func(s int) metav1.Time { return metav1.NewTime(time.Unix(int64(1000+s), 0)) }
	machine := func(name string, created int, ready bool, annotated bool) *clusterv1.Machine {
		m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: at(created)}}
		if annotated {
			m.Annotations = map[string]string{clusterv1.DeleteMachineAnnotation: ""}
		}
		status := metav1.ConditionFalse
		if ready {
			status = metav1.ConditionTrue
		}
		m.Status.Conditions = []metav1.Condition{{Type: clusterv1.MachineReadyCondition, Status: status}}
		return m
	}
	machines := []*clusterv1.Machine{
		machine("old", 1, true, false), machine("mid", 2, true, true), machine("new", 3, true, false), machine("sick", 0, false, false),
	}
	names := func(ms []*clusterv1.Machine) []string {
		var out []string
		for _, m := range ms {
			out = append(out, m.Name)
		}
		return out
	}
	tests := []struct {
		order clusterv1.MachineSetDeletionOrder
		want  []string
	}{
		{clusterv1.RandomMachineSetDeletionOrder, []string{"mid", "sick", "new", "old"}},
		{clusterv1.NewestMachineSetDeletionOrder, []string{"mid", "sick", "new", "old"}},
		{clusterv1.OldestMachineSetDeletionOrder, []string{"mid", "sick", "old", "new"}},
	}
	for _, tt := range tests {
		if got := names(deletionOrder(machines, tt.order)); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: got %v, want %v", tt.order, got, tt.want)
		}
	}
}
