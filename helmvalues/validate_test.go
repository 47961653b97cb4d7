package helmvalues

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

func TestCheckChartScalar(t *testing.T) {
	ok := []string{"m1.small", "m1 small", "ds4G", "az-1", "__DEFAULT__", "Fast NVMe", "a:b", "-x", "ssd/gold", "c1d2e3f4-0000-4000-8000-000000000001", "nova"}
	bad := []string{"", "2", "1.5", "1e3", "0x1F", "yes", "No", "on", "null", "~", "true", "a: b", "a #b", "- a",
		"{a}", "[a]", "a,b", "'a'", "\"a\"", "&anchor", "*alias", "!tag", "|", ">", "%x", "a\\b", " a", "a ", "a\nb", "{{ x }}", "@x", "`x`", "? x"}
	for _, s := range ok {
		if msg := checkChartScalar(s); msg != "" {
			t.Errorf("checkChartScalar(%q) refused: %s", s, msg)
		}
	}
	for _, s := range bad {
		if msg := checkChartScalar(s); msg == "" {
			t.Errorf("checkChartScalar(%q) accepted", s)
		}
	}
}

func TestCheckURL(t *testing.T) {
	for _, tt := range []struct {
		url string
		ok  bool
	}{
		{"https://keystone.example.com:5000/v3", true},
		{"http://user:p%40ss@proxy:3128", true},
		{"socks5://proxy:1080", true},
		{"proxy:3128", false},
		{"https://", false},
		{"https://a b", false},
		{"https://x/{{y}}", false},
		{"https://x/#frag", false},
		{"ftp://x", false},
	} {
		if got := checkURL(tt.url, []string{"http", "https", "socks5"}) == ""; got != tt.ok {
			t.Errorf("checkURL(%q) ok = %v, want %v", tt.url, got, tt.ok)
		}
	}
}

func TestCheckRegistryHost(t *testing.T) {
	for _, tt := range []struct {
		host string
		ok   bool
	}{
		{"docker.io", true}, {"registry.example.com:5000", true}, {"10.0.0.1:5000", true}, {"[2001:db8::1]:5000", true},
		{"Registry.Example.com", false}, {"host:0", false}, {"host:99999", false}, {"host:05000", false}, {"[::1", false}, {"", false}, {"a/b", false},
	} {
		if got := checkRegistryHost(tt.host) == ""; got != tt.ok {
			t.Errorf("checkRegistryHost(%q) ok = %v, want %v", tt.host, got, tt.ok)
		}
	}
}

// validatorSamples exercise the Kubernetes name rules at their edges.
var validatorSamples = []string{
	"", "a", "A", "0", "-", "a-", "-a", "a-b", "a.b", "a..b", "a_b", "a/b", "example.com/a", "Example.com/a", "/a", "a/",
	"example.com/", "a/b/c", "kubernetes.io/hostname", "node.kubernetes.io/pool", "x" + string(make([]byte, 0)),
	"abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz0", "abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz01",
	"ünï", "a b", "a.", ".a", "1.2.3.4",
}

// TestValidatorsAgreeWithKubernetes compares the package's own name rules
// with apimachinery's (which the package does not import, to stay pure).
func TestValidatorsAgreeWithKubernetes(t *testing.T) {
	for _, s := range validatorSamples {
		compareValidators(t, s)
	}
}

func compareValidators(t testing.TB, s string) {
	t.Helper()
	if got, want := isDNSLabel(s), len(validation.IsDNS1123Label(s)) == 0; got != want {
		t.Errorf("isDNSLabel(%q) = %v, apimachinery says %v", s, got, want)
	}
	if got, want := isDNSSubdomain(s), len(validation.IsDNS1123Subdomain(s)) == 0; got != want {
		t.Errorf("isDNSSubdomain(%q) = %v, apimachinery says %v", s, got, want)
	}
	if got, want := isQualifiedName(s), len(validation.IsQualifiedName(s)) == 0; got != want {
		t.Errorf("isQualifiedName(%q) = %v, apimachinery says %v", s, got, want)
	}
	if got, want := isLabelValue(s), len(validation.IsValidLabelValue(s)) == 0; got != want {
		t.Errorf("isLabelValue(%q) = %v, apimachinery says %v", s, got, want)
	}
}
