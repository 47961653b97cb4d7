package clusters

import (
	"context"
	"reflect"
	"testing"

	"github.com/magnum-capi/magnum-capi/server/release"
)

func TestCertificateRenewal(t *testing.T) {
	lbPatch := release.SpecPatch{Group: "infrastructure.cluster.x-k8s.io", Kind: "OpenStackCluster",
		Spec: map[string]any{"apiServerLoadBalancer": map[string]any{"flavor": "amphora-ha"}}}
	recorded := func(v string) *release.Release {
		return &release.Release{Labels: map[string]string{"magnum.openstack.org/cluster-uuid": "u", certificatesExpiryDefaultLabel: v}}
	}
	tests := []struct {
		name       string
		set        bool
		deployed   *release.Release
		wantDays   int // 0: no renewal patch added
		wantRecord bool
	}{
		{name: "a new cluster gets the default and records it", wantDays: 21, wantRecord: true},
		{name: "a new cluster with the label set records the default", set: true, wantRecord: true},
		{name: "a cluster created with the default keeps it", deployed: recorded("21"), wantDays: 21},
		{name: "the label wins over the recorded default", set: true, deployed: recorded("21")},
		{name: "a cluster deployed without the record keeps it off", deployed: &release.Release{Labels: map[string]string{"magnum.openstack.org/cluster-uuid": "u"}}},
		{name: "an adopted release without labels keeps it off", deployed: &release.Release{}},
		{name: "a record that is not a number is off", deployed: recorded("soon")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rendered := rendered{certExpirySet: tt.set, specPatches: []release.SpecPatch{lbPatch}}
			target := release.Target{SpecPatches: rendered.specPatches}
			certificateRenewal(&target, rendered, tt.deployed)
			if got := target.RecordLabels[certificatesExpiryDefaultLabel]; (got == "21") != tt.wantRecord || (got != "" && got != "21") {
				t.Errorf("record label %q, want recorded: %v", got, tt.wantRecord)
			}
			if !reflect.DeepEqual(target.SpecPatches[0], lbPatch) || len(rendered.specPatches) != 1 {
				t.Errorf("the rendered patches changed: %v", target.SpecPatches)
			}
			days := 0
			if len(target.SpecPatches) == 3 {
				before, _ := target.SpecPatches[1].Spec["rolloutBefore"].(map[string]any)
				days, _ = before["certificatesExpiryDays"].(int)
			} else if len(target.SpecPatches) != 1 {
				t.Fatalf("%d spec patches, want 1 or 3", len(target.SpecPatches))
			}
			if days != tt.wantDays {
				t.Errorf("renewal %d days, want %d", days, tt.wantDays)
			}
		})
	}
}

// TestCertificateRenewalDefault: a create records the default on the
// release and renews at it; a later update keeps it; a release deployed
// without the record keeps renewal off until a label sets it.
func TestCertificateRenewalDefault(t *testing.T) {
	key := testNamespace + "/" + testStackID
	tests := []struct {
		name       string
		arrange    func(t *testing.T, b *bed, spec *Spec)
		wantDays   int
		wantRecord string
	}{
		{name: "created by this driver: 21, recorded", wantDays: 21, wantRecord: "21",
			arrange: func(t *testing.T, b *bed, _ *Spec) { b.deployed(t, testSpec()) }},
		{name: "deployed without the record: off", arrange: func(_ *testing.T, b *bed, _ *Spec) {
			b.releases.releases[key] = &release.Release{Name: testStackID, Namespace: testNamespace, Revision: 1, Status: "deployed",
				Labels: map[string]string{"magnum.openstack.org/cluster-uuid": testSpec().Cluster.UUID}}
		}},
		{name: "deployed without the record, the label set: the label's", wantDays: 30, arrange: func(_ *testing.T, b *bed, spec *Spec) {
			b.releases.releases[key] = &release.Release{Name: testStackID, Namespace: testNamespace, Revision: 1, Status: "deployed"}
			spec.Cluster.Labels = map[string]string{"control_plane_certificates_expiry_days": "30"}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, spec := newBed(t), createdSpec()
			tt.arrange(t, b, &spec)
			if err := b.s.Update(context.Background(), projectCaller, spec, Change{}); err != nil {
				t.Fatal(err)
			}
			days := 0
			for _, p := range b.releases.targets[key].SpecPatches {
				if before, ok := p.Spec["rolloutBefore"].(map[string]any); ok {
					days, _ = before["certificatesExpiryDays"].(int)
				}
			}
			if days != tt.wantDays {
				t.Errorf("renewal %d days before expiry, want %d", days, tt.wantDays)
			}
			if got := b.releases.releases[key].Labels[certificatesExpiryDefaultLabel]; got != tt.wantRecord {
				t.Errorf("recorded default %q, want %q", got, tt.wantRecord)
			}
		})
	}
}
