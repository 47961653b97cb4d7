package helmvalues

import (
	"reflect"
	"strings"
	"testing"
)

func TestLabelNotes(t *testing.T) {
	tests := []struct {
		name              string
		template, cluster map[string]string
		want              []string
	}{
		{"applied labels: nothing to say", map[string]string{"boot_volume_size": "20"}, map[string]string{"monitoring_enabled": "true"}, nil},
		{"a typo gets the near name", nil, map[string]string{"boot_volume_sise": "20"},
			[]string{"label boot_volume_sise is not known to this driver and is ignored (did you mean boot_volume_size?)"}},
		{"a transposition", map[string]string{"monitoirng_enabled": "true"}, nil,
			[]string{"label monitoirng_enabled is not known to this driver and is ignored (did you mean monitoring_enabled?)"}},
		{"nothing near: no guess", nil, map[string]string{"colour": "blue"},
			[]string{"label colour is not known to this driver and is ignored"}},
		{"another driver's label", map[string]string{"kube_tag": "v1.33.2"}, nil,
			[]string{"label kube_tag has no effect: the Kubernetes version comes from the image's kube_version property"}},
		{"deprecated name", map[string]string{"etcd_volume_size": "10"}, nil,
			[]string{"label etcd_volume_size is deprecated; use " + labelAliases["etcd_volume_size"]}},
		{"template-only label on the cluster", map[string]string{"capi_helm_chart_version": "0.27.0"}, map[string]string{"capi_helm_chart_version": "0.26.0"},
			[]string{"cluster label capi_helm_chart_version=0.26.0 is ignored: it is read from the cluster template only"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := LabelNotes(tt.template, tt.cluster); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("LabelNotes = %q, want %q", got, tt.want)
			}
		})
	}
}

// Build warns with the same notes, and values.strictLabels names the near label
// in its error.
func TestBuildWarnsWithLabelNotes(t *testing.T) {
	in := minimalInput(t)
	in.Cluster.Labels = map[string]string{"boot_volume_sise": "20"}
	res, err := Build(in, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	want := "label boot_volume_sise is not known to this driver and is ignored (did you mean boot_volume_size?)"
	found := false
	for _, w := range res.Warnings {
		found = found || w == want
	}
	if !found {
		t.Errorf("warnings %q, want %q among them", res.Warnings, want)
	}
	strict := DefaultConfig()
	strict.StrictLabels = true
	_, err = Build(in, strict)
	if err == nil || !strings.Contains(err.Error(), "labels.boot_volume_sise") || !strings.Contains(err.Error(), "such as boot_volume_size") {
		t.Errorf("strict: %v, want an error naming labels.boot_volume_sise and boot_volume_size", err)
	}
}

func TestEditDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"abc", "", 3}, {"kube_tag", "kube_tag", 0}, {"sise", "size", 1}, {"ab", "ba", 2}} {
		if got := editDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}
