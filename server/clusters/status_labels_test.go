package clusters

import (
	"testing"

	"github.com/magnum-capi/magnum-capi/capistatus"
	"github.com/magnum-capi/magnum-capi/helmvalues"
)

func TestStatusReasonCarriesLabelNotes(t *testing.T) {
	typo := "label monitoirng_enabled is not known to this driver and is ignored (did you mean monitoring_enabled?)"
	tests := []struct {
		name          string
		labels        map[string]string
		status, given string
		want          string
	}{
		{"create in progress", map[string]string{"monitoirng_enabled": "true"}, "CREATE_IN_PROGRESS", "waiting for the control plane",
			"waiting for the control plane (labels: " + typo + ")"},
		{"update in progress, no reason yet", map[string]string{"monitoirng_enabled": "true"}, "UPDATE_IN_PROGRESS", "", "labels: " + typo},
		{"complete: Cluster API's reason only", map[string]string{"monitoirng_enabled": "true"}, "CREATE_COMPLETE", "", ""},
		{"failed: the failure only", map[string]string{"monitoirng_enabled": "true"}, "CREATE_FAILED", "quota exceeded", "quota exceeded"},
		{"labels all applied", map[string]string{"monitoring_enabled": "true"}, "CREATE_IN_PROGRESS", "waiting", "waiting"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := Spec{Cluster: helmvalues.Cluster{Labels: tt.labels}}
			got := withLabelNotes(spec, capistatus.Result{Status: tt.status, StatusReason: tt.given})
			if got.StatusReason != tt.want || got.Status != tt.status {
				t.Errorf("status %s, reason %q; want %s, %q", got.Status, got.StatusReason, tt.status, tt.want)
			}
		})
	}
}
