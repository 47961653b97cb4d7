package clusters

import (
	"reflect"
	"testing"

	"github.com/magnum-capi/magnum-capi/certs"
)

func TestFingerprintCoversAllMaterial(t *testing.T) {
	base := certs.Authorities{
		CA: certs.KeyPair{Certificate: []byte("ca")}, EtcdCA: certs.KeyPair{Certificate: []byte("etcd")},
		FrontProxyCA: certs.KeyPair{Certificate: []byte("proxy")}, ServiceAccount: certs.KeyPair{Certificate: []byte("sa")},
	}
	changed := map[string]func(*certs.Authorities){
		"CA":              func(a *certs.Authorities) { a.CA.Certificate = []byte("ca2") },
		"etcd CA":         func(a *certs.Authorities) { a.EtcdCA.Certificate = []byte("etcd2") },
		"front-proxy CA":  func(a *certs.Authorities) { a.FrontProxyCA.Certificate = []byte("proxy2") },
		"service account": func(a *certs.Authorities) { a.ServiceAccount.Certificate = []byte("sa2") },
		// Boundaries between the parts count: moving bytes across is a change.
		"shifted bytes": func(a *certs.Authorities) { a.CA.Certificate, a.EtcdCA.Certificate = []byte("cae"), []byte("tcd") },
	}
	want := fingerprint(base)
	if fingerprint(base) != want || len(want) != 16 {
		t.Fatalf("fingerprint %q is not stable or not 16 hex digits", want)
	}
	for name, change := range changed {
		a := base
		change(&a)
		if fingerprint(a) == want {
			t.Errorf("changing the %s keeps the fingerprint", name)
		}
	}
}

func TestMachineMetadataMarker(t *testing.T) {
	marked := func(v string) map[string]any {
		return map[string]any{
			"controlPlane":      map[string]any{"machineMetadata": map[string]any{caRotationKey: v}},
			"nodeGroupDefaults": map[string]any{"machineMetadata": map[string]any{caRotationKey: v}},
		}
	}
	tests := []struct {
		name             string
		deployed, values map[string]any
		want             map[string]any
	}{
		{"nothing deployed", map[string]any{}, map[string]any{}, map[string]any{}},
		{"marker carried", marked("aa"), map[string]any{}, marked("aa")},
		{"marker carried beside other metadata",
			marked("aa"),
			map[string]any{"controlPlane": map[string]any{"machineMetadata": map[string]any{"team": "x"}, "machineFlavor": "m1"}},
			map[string]any{
				"controlPlane":      map[string]any{"machineMetadata": map[string]any{"team": "x", caRotationKey: "aa"}, "machineFlavor": "m1"},
				"nodeGroupDefaults": map[string]any{"machineMetadata": map[string]any{caRotationKey: "aa"}},
			}},
		{"marker only on node groups (values edited by hand)",
			map[string]any{"nodeGroupDefaults": map[string]any{"machineMetadata": map[string]any{caRotationKey: "bb"}}},
			map[string]any{}, marked("bb")},
		{"empty marker not carried", marked(""), map[string]any{}, map[string]any{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			carryMachineMetadata(tt.deployed, tt.values, caRotationKey)
			if !reflect.DeepEqual(tt.values, tt.want) {
				t.Errorf("values %v, want %v", tt.values, tt.want)
			}
		})
	}
}
