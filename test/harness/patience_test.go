package harness

import (
	"testing"
	"time"
)

func TestPatience(t *testing.T) {
	for _, tc := range []struct {
		env  string
		want time.Duration
	}{
		{"", 6 * time.Minute},
		{"1", 3 * time.Minute},
		{"1.5", 4*time.Minute + 30*time.Second},
		{"0", 6 * time.Minute},
		{"-1", 6 * time.Minute},
		{"soon", 6 * time.Minute},
	} {
		t.Setenv("MAGNUM_CAPI_PATIENCE", tc.env)
		if got := Patience(3 * time.Minute); got != tc.want {
			t.Errorf("MAGNUM_CAPI_PATIENCE=%q: Patience(3m) = %s, want %s", tc.env, got, tc.want)
		}
	}
}
