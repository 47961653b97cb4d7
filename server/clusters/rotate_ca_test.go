package clusters

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"

	"github.com/magnum-capi/magnum-capi/certs"
	"github.com/magnum-capi/magnum-capi/certs/certstest"
	"github.com/magnum-capi/magnum-capi/helmvalues"
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

var rotatedAuthorities = sync.OnceValues(func() (certs.Authorities, error) {
	a, _, err := certstest.Authorities("demo")
	return a, err
})

// TestRotateCACertificate: whatever fails, the management cluster ends on
// the CA Magnum keeps by the answer: the old one after an error, the new
// one after success or an AppliedError.
func TestRotateCACertificate(t *testing.T) {
	namespace := "ensure namespace " + testNamespace
	deploy := "deploy " + testNamespace + "/" + testStackID + " " + helmvalues.ChartVersion
	switched := append(withoutWrites(createWrites, "cloud-credentials", "credential", "server group", "deploy", "namespace"),
		"delete secret "+testNamespace+"/"+testStackID+"-kubeconfig")
	tests := []struct {
		name      string
		fail      failures // the releases'
		wantClass string
		wantIn    string
		wantNewCA bool
		want      []string
	}{
		{name: "rotated: the new CA Secrets, the kubeconfig reissued, the release rolled",
			wantClass: "OK", wantNewCA: true, want: append([]string{deploy, namespace}, switched...)},
		{name: "Helm fails before the gate: nothing switched",
			fail:      failures{"Deploy": errors.New("reading the release history: connection refused")},
			wantClass: "", wantIn: "connection refused", want: []string{namespace}},
		{name: "Helm fails at its first write: the old CA Secrets put back",
			fail:      failures{"DeployAtWrite": errors.New("creating the release record: etcdserver: request timed out")},
			wantClass: "", wantIn: "request timed out",
			want: append(append([]string{namespace}, switched...), switched...)},
		{name: "Helm fails after writing the release: the new CA stays",
			fail:      failures{"DeployAfterWrite": errors.New("creating MachineDeployment: admission webhook denied the request")},
			wantClass: "", wantIn: "the new CA is in the management cluster", wantNewCA: true,
			want: append([]string{deploy, namespace}, switched...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBed(t)
			b.deployed(t, testSpec())
			next, err := rotatedAuthorities()
			if err != nil {
				t.Fatal(err)
			}
			b.releases.fail = tt.fail
			err = b.s.RotateCACertificate(context.Background(), projectCaller, createdSpec(), next)
			assertOutcome(t, err, tt.wantClass, tt.wantIn, b.writes(), tt.want)
			ca, _ := b.kube.GetSecret(context.Background(), testNamespace, testStackID+"-ca")
			want := testAuthorities(t).CA.Certificate
			if tt.wantNewCA {
				want = next.CA.Certificate
			}
			if ca == nil || !bytes.Equal(ca.Data[certs.CertificateKey], want) {
				t.Errorf("the CA Secret does not hold the %s CA", map[bool]string{true: "new", false: "old"}[tt.wantNewCA])
			}
		})
	}
}
