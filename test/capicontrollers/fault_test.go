package capicontrollers

import (
	"reflect"
	"strings"
	"testing"
	"time"
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
  serverQuota: true
  serverError: "*-md-0-*"
  serverLost: "c-md-0-abc"
  bootDelay: 30s
  kubeletVersion: v1.32.5
  apiServerDown: true
`,
			want: []Rule{{Cluster: "quota-*", Namespace: "magnum-*", Faults: Faults{
				InfraFailure: "boom", InfraFailureEnabled: true, InfraFailureTerminal: true,
				AddonFailure: "*-cni-calico", AddonFailureMessage: "no chart", StuckRollout: true, StuckDeletion: true,
				ServerQuota: true, ServerError: "*-md-0-*", ServerLost: "c-md-0-abc", BootDelay: Duration{30 * time.Second},
				KubeletVersion: "v1.32.5", APIServerDown: true,
			}}},
		},
		{
			name: "empty infra failure selects the default",
			yaml: `[{cluster: a, infraFailure: ""}]`,
			want: []Rule{{Cluster: "a", Faults: Faults{InfraFailureEnabled: true}}},
		},
		{name: "JSON, as the Python tests write it", yaml: `[{"cluster": "a", "stuckRollout": true}]`, want: []Rule{{Cluster: "a", Faults: Faults{StuckRollout: true}}}},
		{name: "no cluster", yaml: `[{stuckRollout: true}]`, wantErr: "cluster (a glob of Cluster names) is required"},
		{name: "bad glob", yaml: `[{cluster: "a["}]`, wantErr: `cluster "a[" is not a valid glob`},
		{name: "bad addon glob", yaml: `[{cluster: a, addonFailure: "x["}]`, wantErr: `addonFailure "x[" is not a valid glob`},
		{name: "bad server glob", yaml: `[{cluster: a, serverError: "x["}]`, wantErr: `serverError "x[" is not a valid glob`},
		{name: "bad duration", yaml: `[{cluster: a, bootDelay: soon}]`, wantErr: "soon"},
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
	book.setRules([]Rule{
		{Cluster: "*", Faults: Faults{StuckRollout: true}},
		{Cluster: "q-*", Namespace: "ns-a", Faults: Faults{InfraFailure: "first"}},
		{Cluster: "q-1", Faults: Faults{InfraFailure: "later rule", AddonFailure: "*", BootDelay: Duration{time.Minute}}},
	})
	tests := []struct {
		name, namespace, cluster string
		annotations              map[string]string
		want                     Faults
	}{
		{name: "wildcard only", namespace: "x", cluster: "other", want: Faults{StuckRollout: true}},
		{name: "namespace must match", namespace: "ns-b", cluster: "q-2", want: Faults{StuckRollout: true}},
		{name: "one rule", namespace: "ns-a", cluster: "q-2", want: Faults{StuckRollout: true, InfraFailure: "first", InfraFailureEnabled: true}},
		{
			name: "later rules win", namespace: "ns-a", cluster: "q-1",
			want: Faults{StuckRollout: true, InfraFailure: "later rule", InfraFailureEnabled: true, AddonFailure: "*", BootDelay: Duration{time.Minute}},
		},
		{
			name: "annotations win", namespace: "ns-a", cluster: "q-1",
			annotations: map[string]string{
				AnnotationInfraFailure: "from annotation", AnnotationInfraFailureTerminal: "true",
				AnnotationAddonFailure: "*-ccm", AnnotationAddonFailureMessage: "m", AnnotationStuckDeletion: "true",
				AnnotationBootDelay: "5s", AnnotationServerQuota: "true", AnnotationKubeletVersion: "v1.32.5",
				AnnotationAPIServerDown: "true", AnnotationServerLost: "m1", AnnotationServerError: "m2",
			},
			want: Faults{
				StuckRollout: true, StuckDeletion: true, InfraFailure: "from annotation", InfraFailureEnabled: true,
				InfraFailureTerminal: true, AddonFailure: "*-ccm", AddonFailureMessage: "m", BootDelay: Duration{5 * time.Second},
				ServerQuota: true, KubeletVersion: "v1.32.5", APIServerDown: true, ServerLost: "m1", ServerError: "m2",
			},
		},
		{
			name: "empty infra annotation is the default failure; malformed values are ignored", namespace: "x", cluster: "other",
			annotations: map[string]string{AnnotationInfraFailure: "", AnnotationStuckDeletion: "no", AnnotationBootDelay: "soon"},
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
