package clusters

import (
	"testing"
	"time"
)

// TestCredentialRenewalDue: a credential that never expires is never
// renewed; one is renewed from renewBefore ahead of its expiry on, also
// once it has expired.
func TestCredentialRenewalDue(t *testing.T) {
	expires := time.Date(2027, 1, 31, 0, 0, 0, 0, time.UTC)
	const before = 720 * time.Hour
	tests := []struct {
		name    string
		expires time.Time
		now     time.Time
		want    bool
	}{
		{"never expires", time.Time{}, expires, false},
		{"well before the window", expires, expires.Add(-before - time.Hour), false},
		{"the window opens", expires, expires.Add(-before), true},
		{"inside the window", expires, expires.Add(-time.Hour), true},
		{"already expired", expires, expires.Add(time.Hour), true},
	}
	for _, tt := range tests {
		if got := credentialRenewalDue(tt.expires, tt.now, before); got != tt.want {
			t.Errorf("%s: credentialRenewalDue = %v, want %v", tt.name, got, tt.want)
		}
	}
}
