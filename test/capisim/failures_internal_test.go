package capisim

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseRules(t *testing.T) {
	tests := []struct {
		name    string
		yaml    string
		want    []Rule
		wantErr string
	}{
		{name: "empty", yaml: "", want: []Rule{}},
		{
			name: "every field",
			yaml: `
- cluster: "quota-*"
  namespace: "magnum-*"
  infraFailure: "boom"
  infraFailureTerminal: true
  addonFailure: "*-cni-calico"
  addonFailureMessage: "no chart"
  stuckRollout: true
  stuckDeletion: true
`,
			want: []Rule{{Cluster: "quota-*", Namespace: "magnum-*", Faults: Faults{
				InfraFailure: "boom", InfraFailureEnabled: true, InfraFailureTerminal: true,
				AddonFailure: "*-cni-calico", AddonFailureMessage: "no chart", StuckRollout: true, StuckDeletion: true,
			}}},
		},
		{
			name: "empty infra failure selects the default",
			yaml: `[{cluster: a, infraFailure: ""}]`,
			want: []Rule{{Cluster: "a", Faults: Faults{InfraFailureEnabled: true}}},
		},
		{name: "no cluster", yaml: `[{stuckRollout: true}]`, wantErr: "cluster (a glob of Cluster names) is required"},
		{name: "bad glob", yaml: `[{cluster: "a["}]`, wantErr: `cluster "a[" is not a valid glob`},
		{name: "bad addon glob", yaml: `[{cluster: a, addonFailure: "x["}]`, wantErr: `addonFailure "x[" is not a valid glob`},
		{name: "unknown key", yaml: `[{cluster: a, stuckRolout: true}]`, wantErr: "unknown field"},
		{name: "not a list", yaml: `cluster: a`, wantErr: "fault rules"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseRules(tt.yaml)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestFaultsFor(t *testing.T) {
	var book faultBook
	book.setGoRules([]Rule{
		{Cluster: "*", Faults: Faults{StuckRollout: true}},
		{Cluster: "q-*", Namespace: "ns-a", Faults: Faults{InfraFailure: "from go"}},
	})
	book.setConfigMapRules([]Rule{
		{Cluster: "q-1", Faults: Faults{InfraFailure: "from configmap", AddonFailure: "*"}},
	})
	tests := []struct {
		name, namespace, cluster string
		annotations              map[string]string
		want                     Faults
	}{
		{name: "go wildcard only", namespace: "x", cluster: "other", want: Faults{StuckRollout: true}},
		{name: "namespace must match", namespace: "ns-b", cluster: "q-2", want: Faults{StuckRollout: true}},
		{name: "go rule", namespace: "ns-a", cluster: "q-2", want: Faults{StuckRollout: true, InfraFailure: "from go", InfraFailureEnabled: true}},
		{
			name: "configmap over go", namespace: "ns-a", cluster: "q-1",
			want: Faults{StuckRollout: true, InfraFailure: "from configmap", InfraFailureEnabled: true, AddonFailure: "*"},
		},
		{
			name: "annotations over both", namespace: "ns-a", cluster: "q-1",
			annotations: map[string]string{
				AnnotationInfraFailure: "from annotation", AnnotationInfraFailureTerminal: "true",
				AnnotationAddonFailure: "*-ccm", AnnotationAddonFailureMessage: "m", AnnotationStuckDeletion: "true",
			},
			want: Faults{
				StuckRollout: true, StuckDeletion: true, InfraFailure: "from annotation", InfraFailureEnabled: true,
				InfraFailureTerminal: true, AddonFailure: "*-ccm", AddonFailureMessage: "m",
			},
		},
		{
			name: "empty infra annotation is the default failure", namespace: "x", cluster: "other",
			annotations: map[string]string{AnnotationInfraFailure: "", AnnotationStuckDeletion: "no"},
			want:        Faults{StuckRollout: true, InfraFailureEnabled: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := book.faultsFor(tt.namespace, tt.cluster, tt.annotations); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestInfraFailureMessage(t *testing.T) {
	tests := []struct {
		f    Faults
		want string
	}{
		{Faults{}, ""},
		{Faults{InfraFailureEnabled: true}, DefaultInfraFailure},
		{Faults{InfraFailure: "x"}, "x"},
	}
	for _, tt := range tests {
		if got := tt.f.infraFailureMessage(); got != tt.want {
			t.Errorf("%+v: got %q, want %q", tt.f, got, tt.want)
		}
	}
	if !strings.Contains(DefaultInfraFailure, "Quota has been met for resources: Load Balancer") {
		t.Errorf("the default failure is not Octavia's quota error: %s", DefaultInfraFailure)
	}
}

func TestAddonFails(t *testing.T) {
	f := Faults{AddonFailure: "*-cni-*", AddonFailureMessage: "broken"}
	tests := []struct {
		name     string
		fails    bool
		wantMess string
	}{
		{"r1-cni-calico", true, "broken"},
		{"r1-ccm-openstack", false, ""},
	}
	for _, tt := range tests {
		fails, msg := f.addonFails(tt.name)
		if fails != tt.fails || msg != tt.wantMess {
			t.Errorf("%s: got %v %q", tt.name, fails, msg)
		}
	}
	if fails, _ := (Faults{}).addonFails("anything"); fails {
		t.Error("no fault, yet it fails")
	}
}
