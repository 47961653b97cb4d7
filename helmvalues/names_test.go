package helmvalues

import (
	"crypto/sha256"
	"fmt"
	"strings"
	"testing"
)

func TestSanitizedName(t *testing.T) {
	for in, want := range map[string]string{
		"default-worker": "default-worker",
		"GPU Workers":    "gpu-workers",
		"a_b":            "a-b",
		"--a__b--":       "a-b",
		"___":            "",
		"":               "",
		"Ünïcode pool 1": "n-code-pool-1",
		"1st":            "1st",
	} {
		if got := sanitizedName(in); got != want {
			t.Errorf("sanitizedName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestReleaseName pins names made before ReleaseName hashed the uuid in one
// call (it read the same SHA-256 block through a stream): a create retried
// across an upgrade must name the release its first attempt made.
func TestReleaseName(t *testing.T) {
	tests := []struct{ cluster, uuid, want string }{
		{"demo", "2a3a1b6e-5d8c-4f1e-9c3b-7a6d5e4f3c2b", "demo-hz6ee6mpqcbe"},
		{"My_Cluster.prod", "0b9e7c1d-1111-4a2b-8c3d-4e5f6a7b8c9d", "my-cluster-prod-g5ibniynamaw"},
		// Cut to 30 characters; the trailing "-" the cut leaves is dropped.
		{"kubernetes-cluster-with-a-long-name", "f47ac10b-58cc-4372-a567-0e02b2c3d479", "kubernetes-cluster-with-a-long-bx3n6ikapqex"},
		{"abcdefghijklmnopqrstuvwxyz012-x", "6ba7b810-9dad-11d1-80b4-00c04fd430c8", "abcdefghijklmnopqrstuvwxyz012-kpszx3h2w2lc"},
		{"___", "00000000-0000-0000-0000-000000000000", "cluster-5fnsaj3lzpe2"},
		{"k8s", "c9bf9e57-1685-4c89-bafb-ff5af830be8a", "k8s-jucnjafh3uxr"},
	}
	for _, tt := range tests {
		got := ReleaseName(tt.cluster, tt.uuid)
		if got != tt.want {
			t.Errorf("ReleaseName(%q, %q) = %q, want %q", tt.cluster, tt.uuid, got, tt.want)
		}
		if !IsReleaseName(got) {
			t.Errorf("ReleaseName(%q, %q) = %q is not a stack_id IsReleaseName accepts", tt.cluster, tt.uuid, got)
		}
	}
}

func TestNamespace(t *testing.T) {
	for _, tt := range []struct{ prefix, project, want string }{
		{"magnum", "9e4a5c1f2b3d4e5f6a7b8c9d0e1f2a3b", "magnum-9e4a5c1f2b3d4e5f6a7b8c9d0e1f2a3b"},
		{"magnum", "2C8F0F5A-8D8E-4C5B-B9F3-1E2D3C4B5A69", "magnum-2c8f0f5a8d8e4c5bb9f31e2d3c4b5a69"},
		{"region-one", "a_b.c", "region-one-abc"},
	} {
		if got := Namespace(tt.prefix, tt.project); got != tt.want {
			t.Errorf("Namespace(%q, %q) = %q, want %q", tt.prefix, tt.project, got, tt.want)
		}
	}
}

func TestNodeGroupName(t *testing.T) {
	release43 := "kubernetes-cluster-with-a-long-5jc1mbt6pjhx"
	tests := []struct {
		release, name, want string
	}{
		{"demo-abcdefghijkl", "default-worker", "default-worker"},
		{"demo-abcdefghijkl", "GPU Workers", "gpu-workers"},
		// Exactly 63 with a 43-character release: kept (StackHPC name).
		{release43, "nineteen-characters", "nineteen-characters"},
		// One more: shortened with a hash.
		{release43, "twenty-characters-ng", "twenty-cha-" + hash8("twenty-characters-ng")},
		{"demo-abcdefghijkl", "1st", "ng-1st-" + hash8("1st")},
		{"demo-abcdefghijkl", "ab", "ab-" + hash8("ab")},
		{"demo-abcdefghijkl", "___", "ng-" + hash8("___")},
		{"demo-abcdefghijkl", "", "ng-" + hash8("")},
		{"demo-abcdefghijkl", "control-plane", "control-plane-" + hash8("control-plane")},
		{strings.Repeat("r", 53), "workers", "workers"},
		{strings.Repeat("r", 53), "workers-pool", "n" + hash8("workers-pool")},
	}
	for _, tt := range tests {
		got := NodeGroupName(tt.release, tt.name)
		if got != tt.want {
			t.Errorf("NodeGroupName(%q, %q) = %q, want %q", tt.release, tt.name, got, tt.want)
		}
		checkNodeGroupName(t, tt.release, tt.name, got)
	}
}

func hash8(name string) string {
	sum := fmt.Sprintf("%x", sha256sum(name))
	return sum[:8]
}

// checkNodeGroupName asserts the chart's rules for a node group name.
func checkNodeGroupName(t testing.TB, release, name, got string) {
	t.Helper()
	if !chartNodeGroupName.MatchString(got) {
		t.Errorf("NodeGroupName(%q, %q) = %q breaks the chart's regex", release, name, got)
	}
	if len(release) <= maxReleaseName && len(release)+1+len(got) > maxObjectName {
		t.Errorf("NodeGroupName(%q, %q) = %q: %q is longer than 63", release, name, got, release+"-"+got)
	}
	if got != NodeGroupName(release, name) {
		t.Errorf("NodeGroupName(%q, %q) is not deterministic", release, name)
	}
}

func sha256sum(s string) [32]byte { return sha256.Sum256([]byte(s)) }
