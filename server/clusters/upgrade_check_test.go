package clusters

import (
	"strings"
	"testing"
)

func TestCheckUpgrade(t *testing.T) {
	tests := []struct {
		current, target string
		want            string // "" = allowed
	}{
		{"v1.33.2", "v1.34.1", ""},
		{"v1.33.2", "1.33.4", ""},
		{"", "v1.35.0", ""},
		{"v1.33.2", "1.35.0", "upgrading Kubernetes from v1.33.2 to v1.35.0 skips a minor version; upgrade to v1.34 first"},
		{"1.34.1", "v1.33.2", "downgrading Kubernetes from v1.34.1 to v1.33.2 is not supported"},
		{"v1.33.2", "v2.0.0", "skips a minor version"},
	}
	for _, tt := range tests {
		err := checkUpgrade(tt.current, tt.target)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s -> %s: %v, want allowed", tt.current, tt.target, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s -> %s: %v, want %q", tt.current, tt.target, err, tt.want)
		}
	}
}
