package helmvalues

import "testing"

func TestArgoCDRegister(t *testing.T) {
	tests := []struct {
		name   string
		labels map[string]string
		site   bool
		want   bool
	}{
		{"no label: the site's default (on)", nil, true, true},
		{"no label: the site's default (off)", map[string]string{"other": "x"}, false, false},
		{"label off overrides the site", map[string]string{ArgoCDRegisterLabel: "false"}, true, false},
		{"label on overrides the site", map[string]string{ArgoCDRegisterLabel: "Yes"}, false, true},
		{"empty value: not given", map[string]string{ArgoCDRegisterLabel: " "}, true, true},
		{"unparsable: the site's default", map[string]string{ArgoCDRegisterLabel: "argocd"}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ArgoCDRegister(tt.labels, tt.site); got != tt.want {
				t.Errorf("ArgoCDRegister(%v, %v) = %v, want %v", tt.labels, tt.site, got, tt.want)
			}
		})
	}
}
