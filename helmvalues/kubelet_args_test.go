package helmvalues

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseKubeletArgs(t *testing.T) {
	tests := []struct {
		raw      string
		want     map[string]string
		expected string // substring of the refusal
	}{
		{"max-pods=200", map[string]string{"max-pods": "200"}, ""},
		{"--max-pods=200, --image-gc-high-threshold=90", map[string]string{"max-pods": "200", "image-gc-high-threshold": "90"}, ""},
		{"kube-reserved=cpu=200m,memory=1Gi,max-pods=50", map[string]string{"kube-reserved": "cpu=200m,memory=1Gi", "max-pods": "50"}, ""},
		{"eviction-hard=memory.available<500Mi,nodefs.available<10%", map[string]string{"eviction-hard": "memory.available<500Mi,nodefs.available<10%"}, ""},
		{"eviction-soft-grace-period=memory.available=1m,nodefs.available=30s", map[string]string{"eviction-soft-grace-period": "memory.available=1m,nodefs.available=30s"}, ""},
		{"system-reserved=pid=1000", map[string]string{"system-reserved": "pid=1000"}, ""},
		{"feature-gates=AllAlpha=true", nil, `flag "feature-gates" is not one a tenant may set`},
		{"max-pods=200,root-dir=/tmp", nil, `flag "root-dir" is not one a tenant may set`},
		{"kube-reserved=cpu=1,gpu=1", nil, `flag "gpu" is not one a tenant may set`},
		{"max-pods=0", nil, `the value of max-pods, "0", is not an integer 1–1000`},
		{"max-pods", nil, `item "max-pods" is not flag=value`},
		{"max-pods=1,max-pods=2", nil, "flag max-pods is given twice"},
		{"eviction-hard=memory.free<1Gi", nil, `the value of eviction-hard, "memory.free<1Gi"`},
		{"eviction-hard=memory.available<150%", nil, `"memory.available<150%"`},
		{"eviction-hard=memory.available<1Gi,memory.available<2Gi", nil, "eviction-hard sets memory.available twice"},
		{"system-reserved=pid=1.5k", nil, `"pid=1.5k"`},
		{"container-log-max-size=10Ki", nil, "at least 1Mi"},
		{"container-log-max-files=1", nil, "an integer 2–100"},
		{"shutdown-grace-period=2h", nil, "at most 1h0m0s"},
		{"serialize-image-pulls=yes", nil, "true or false"},
		{"topology-manager-policy=always", nil, "none, best-effort, restricted, single-numa-node"},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			got, expected := parseKubeletArgs(tt.raw)
			if tt.expected != "" {
				if !containsText(expected, tt.expected) {
					t.Fatalf("refusal %q, want one saying %q", expected, tt.expected)
				}
				return
			}
			if expected != "" || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %v (%s), want %v", got, expected, tt.want)
			}
		})
	}
}

func TestKubeletCombination(t *testing.T) {
	tests := []struct {
		args     map[string]string
		expected string
	}{
		{map[string]string{"image-gc-high-threshold": "90", "image-gc-low-threshold": "70"}, ""},
		{map[string]string{"image-gc-high-threshold": "75"}, "image-gc-low-threshold (80) below image-gc-high-threshold (75)"},
		{map[string]string{"eviction-soft": "memory.available<1Gi"}, "memory.available has none"},
		{map[string]string{"eviction-soft": "memory.available<1Gi", "eviction-soft-grace-period": "memory.available=1m"}, ""},
		{map[string]string{"max-parallel-image-pulls": "4"}, "serialize-image-pulls=false"},
		{map[string]string{"max-parallel-image-pulls": "4", "serialize-image-pulls": "false"}, ""},
		{map[string]string{"cpu-manager-policy": "static", "kube-reserved": "memory=1Gi"}, "cpu reserved"},
		{map[string]string{"cpu-manager-policy": "static", "system-reserved": "cpu=500m"}, ""},
		{map[string]string{"shutdown-grace-period-critical-pods": "10s"}, "at most shutdown-grace-period"},
	}
	for _, tt := range tests {
		if got := checkKubeletCombination(tt.args); (tt.expected == "") != (got == "") || !containsText(got, tt.expected) {
			t.Errorf("%v: %q, want %q", tt.args, got, tt.expected)
		}
	}
}

// TestKubeletArgsMapping: the cluster's flags reach the control plane and
// the node group defaults, a node group's own label only its group, and a
// combination kubelet refuses is refused naming the node group.
func TestKubeletArgsMapping(t *testing.T) {
	const ngArgs = "kubeadmConfigSpec.joinConfiguration.nodeRegistration.kubeletExtraArgs"
	tests := []struct {
		name    string
		cluster string
		group   string
		want    map[string]any // value path → value (nil: unset)
		errors  []string
	}{
		{"cluster label", "max-pods=150,kube-reserved=cpu=200m", "", map[string]any{
			"controlPlane." + "kubeadmConfigSpec.initConfiguration.nodeRegistration.kubeletExtraArgs.max-pods": "150",
			"controlPlane.kubeadmConfigSpec.joinConfiguration.nodeRegistration.kubeletExtraArgs.kube-reserved": "cpu=200m",
			"nodeGroupDefaults." + ngArgs + ".max-pods":                                                        "150",
		}, nil},
		{"node group label over the cluster's", "max-pods=150", "max-pods=60,image-gc-high-threshold=95", map[string]any{
			"nodeGroupDefaults." + ngArgs + ".max-pods":    "150",
			"group." + ngArgs + ".max-pods":                "60",
			"group." + ngArgs + ".image-gc-high-threshold": "95",
		}, nil},
		{"bad flag on a node group", "", "root-dir=/srv", nil,
			[]string{"nodegroups[default-worker].labels.kubelet_extra_args", "root-dir=/srv", `flag "root-dir" is not one a tenant may set`}},
		{"bad combination across cluster and node group", "eviction-soft=memory.available<1Gi,eviction-soft-grace-period=memory.available=1m",
			"eviction-soft=nodefs.available<10%", nil,
			[]string{"nodegroups[default-worker].labels.kubelet_extra_args", "nodefs.available has none"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := minimalInput(t)
			if tt.cluster != "" {
				in.Cluster.Labels = map[string]string{"kubelet_extra_args": tt.cluster}
			}
			if tt.group != "" {
				in.NodeGroups[1].Labels = map[string]string{"kubelet_extra_args": tt.group}
			}
			res, ok := buildChecked(t, in, DefaultConfig(), tt.errors)
			if !ok {
				return
			}
			group := res.Values["nodeGroups"].([]any)[0]
			for path, want := range tt.want {
				got := lookupPath(res.Values, group, path)
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s = %v, want %v", path, got, want)
				}
			}
		})
	}
}

func containsText(s, part string) bool { return strings.Contains(s, part) }

// lookupPath reads a dotted path of values, or of the first node group's
// values when it starts with "group.".
func lookupPath(values map[string]any, group any, path string) any {
	tree := values
	if rest, ok := strings.CutPrefix(path, "group."); ok {
		tree, path = group.(map[string]any), rest
	}
	got, _ := lookup(tree, strings.Split(path, ".")...)
	return got
}

// The strict schema of the chart's main branch is generated from its
// default values, so the control plane's kubeletExtraArgs know only
// cloud-provider; the control plane template merges the whole
// kubeadmConfigSpec, so kubelet reads every allowed flag.
func init() {
	// kubelet_tls_cipher_suites (apiserver.go) writes one more flag there.
	for _, flag := range append(kubeletFlagNames(), "tls-cipher-suites") {
		for _, config := range []string{"initConfiguration", "joinConfiguration"} {
			strictSchemaGaps["/controlPlane/kubeadmConfigSpec/"+config+"/nodeRegistration/kubeletExtraArgs/"+flag] =
				"the control plane template merges the whole kubeadmConfigSpec; the schema knows only the defaults' cloud-provider"
		}
	}
}
