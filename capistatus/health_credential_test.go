package capistatus

import (
	"strings"
	"testing"
	"time"
)

var credentialNow = time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)

// credentialHealthCases are docs/status.md's row H-13.
var credentialHealthCases = []struct {
	row, name  string
	expires    time.Time
	wantStatus string
	wantText   []string
}{
	{"H-13", "due: still healthy, the tenant is told", credentialNow.Add(20 * 24 * time.Hour), Healthy,
		[]string{"expires at 2026-12-27 12:00 UTC", "openstack coe credential rotate"}},
	{"H-13", "expired: unhealthy", credentialNow.Add(-time.Minute), Unhealthy,
		[]string{"expired at 2026-12-07 11:59 UTC", "cannot reach OpenStack", "openstack coe credential rotate"}},
}

func TestWithCredentialExpiry(t *testing.T) {
	now := credentialNow
	healthy := Health{Status: Healthy, Reasons: map[string]string{HealthKeyAPI: "ok"}}
	for _, tt := range credentialHealthCases {
		t.Run(tt.name, func(t *testing.T) {
			got := WithCredentialExpiry(healthy, tt.expires, now)
			if got.Status != tt.wantStatus || got.Reasons[HealthKeyAPI] != "ok" {
				t.Errorf("status %s reasons %v, want %s with the other keys kept", got.Status, got.Reasons, tt.wantStatus)
			}
			for _, w := range tt.wantText {
				if !strings.Contains(got.Reasons[HealthKeyCredential], w) {
					t.Errorf("credential reason %q does not say %q", got.Reasons[HealthKeyCredential], w)
				}
			}
			if _, touched := healthy.Reasons[HealthKeyCredential]; touched {
				t.Error("the input's reasons were changed")
			}
		})
	}
	if got := nodeGroupKey(HealthKeyCredential); got != "nodegroup:credential" {
		t.Errorf("a node group named credential gets key %q", got)
	}
}
