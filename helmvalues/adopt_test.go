package helmvalues

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func TestValuesMode(t *testing.T) {
	tests := []struct {
		name        string
		annotations map[string]string
		values      map[string]any
		want        string
	}{
		{"another driver's: no annotations", nil, map[string]any{}, ""},
		{"another driver's: other annotations", map[string]string{"x/y": "z"},
			map[string]any{"clusterAnnotations": map[string]any{"x/y": "z"}}, ""},
		{"ours", map[string]string{ValuesAnnotation: ValuesManaged},
			map[string]any{"clusterAnnotations": map[string]any{ValuesAnnotation: ValuesManaged}}, ValuesManaged},
		{"adopted", map[string]string{ValuesAnnotation: ValuesAdopted},
			map[string]any{"clusterAnnotations": map[string]any{ValuesAnnotation: ValuesAdopted}}, ValuesAdopted},
		{"clusterAnnotations null (helm get values of a null key)", nil, map[string]any{"clusterAnnotations": nil}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ValuesMode(tt.annotations); got != tt.want {
				t.Errorf("ValuesMode = %q, want %q", got, tt.want)
			}
			if got := DeployedValuesMode(tt.values); got != tt.want {
				t.Errorf("DeployedValuesMode = %q, want %q", got, tt.want)
			}
		})
	}
}

// small is a deployed or rendered values tree with the keys Adopt decides on.
func small(kube, image string, groups ...map[string]any) map[string]any {
	list := make([]any, len(groups))
	for i, g := range groups {
		list[i] = g
	}
	return map[string]any{
		"kubernetesVersion": kube, "machineImageId": image,
		"controlPlane": map[string]any{"machineCount": 3, "machineFlavor": "ds4G"},
		"nodeGroups":   list,
	}
}

func group(name string, count int, extra ...any) map[string]any {
	g := map[string]any{"name": name, "machineFlavor": "ds4G", "machineCount": count}
	for i := 0; i+1 < len(extra); i += 2 {
		g[extra[i].(string)] = extra[i+1]
	}
	return g
}

func marked(values map[string]any, mode string) map[string]any {
	setMarker(values, mode)
	return values
}

func TestAdoptMode(t *testing.T) {
	tests := []struct {
		name                         string
		deployed                     map[string]any
		deployedChart, renderedChart string
		rendered                     map[string]any
		wantMode                     string
		wantNote                     string // a substring of the first note; "" wants no notes
	}{
		{"ours stay ours", marked(small("1.30.4", "img", group("w", 2)), ValuesManaged), "0.27.0", "0.27.0",
			small("1.30.4", "img", group("w", 3)), ValuesManaged, ""},
		{"ours on another chart stay ours", marked(small("1.30.4", "img", group("w", 2)), ValuesManaged), "0.27.0", "0.27.1",
			small("1.30.4", "img", group("w", 2)), ValuesManaged, ""},
		{"another driver's, same version, image and chart: kept", small("1.30.4", "img", group("w", 2)), "0.27.0", "0.27.0",
			small("1.30.4", "img", group("w", 3)), ValuesAdopted, "written by another driver are kept"},
		{"adopted stays adopted", marked(small("1.30.4", "img", group("w", 2)), ValuesAdopted), "0.27.0", "0.27.0",
			small("1.30.4", "img", group("w", 2)), ValuesAdopted, "another driver (adopted) are kept"},
		{"the v prefix is no version change", small("v1.30.4", "img", group("w", 2)), "0.27.0", "0.27.0",
			small("1.30.4", "img", group("w", 2)), ValuesAdopted, "are kept"},
		{"an upgrade takes over", small("1.30.4", "img", group("w", 2)), "0.27.0", "0.27.0",
			small("1.31.1", "img2", group("w", 2)), ValuesManaged, "kubernetesVersion 1.30.4 -> 1.31.1, machineImageId img -> img2"},
		{"a new image alone takes over", small("1.30.4", "img", group("w", 2)), "0.27.0", "0.27.0",
			small("1.30.4", "img2", group("w", 2)), ValuesManaged, "machineImageId img -> img2"},
		{"a new chart takes over", small("1.30.4", "img", group("w", 2)), "0.23.0", "0.27.0",
			small("1.30.4", "img", group("w", 2)), ValuesManaged, "chart version 0.23.0 -> 0.27.0"},
		{"an adopted cluster's upgrade takes over", marked(small("1.30.4", "img", group("w", 2)), ValuesAdopted), "0.27.0", "0.27.0",
			small("1.31.1", "img2", group("w", 2)), ValuesManaged, "another driver (adopted) are replaced by this driver's: this is an upgrade"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			deployedBefore, renderedBefore := deepCopy(tt.deployed), deepCopy(tt.rendered)
			a, err := Adopt(AdoptInput{Deployed: tt.deployed, DeployedChart: tt.deployedChart, Rendered: tt.rendered, RenderedChart: tt.renderedChart})
			if err != nil {
				t.Fatal(err)
			}
			if a.Mode != tt.wantMode || DeployedValuesMode(a.Values) != tt.wantMode {
				t.Errorf("mode %q, marker %q; want %q", a.Mode, DeployedValuesMode(a.Values), tt.wantMode)
			}
			switch {
			case tt.wantNote == "" && len(a.Notes) > 0:
				t.Errorf("notes %q, want none", a.Notes)
			case tt.wantNote != "" && (len(a.Notes) == 0 || !strings.Contains(a.Notes[0], tt.wantNote)):
				t.Errorf("notes %q, want the first to mention %q", a.Notes, tt.wantNote)
			}
			wantChart, wantBase := tt.renderedChart, tt.rendered
			if tt.wantMode == ValuesAdopted {
				wantChart, wantBase = tt.deployedChart, tt.deployed
			}
			if a.ChartVersion != wantChart {
				t.Errorf("chart version %q, want %q", a.ChartVersion, wantChart)
			}
			// The result is the chosen base with the marker (counts aside).
			if a.Values["kubernetesVersion"] != wantBase["kubernetesVersion"] || a.Values["machineImageId"] != wantBase["machineImageId"] {
				t.Errorf("values built on the wrong base: %v", a.Values)
			}
			if !reflect.DeepEqual(tt.deployed, deployedBefore) || !reflect.DeepEqual(tt.rendered, renderedBefore) {
				t.Error("Adopt modified its inputs")
			}
		})
	}
}

func TestAdoptTranslations(t *testing.T) {
	stackhpc := func() map[string]any {
		return map[string]any{
			"apiServer": map[string]any{"allowedCidrs": []any{"10.0.0.0/8"}, "enableLoadBalancer": true},
			"clusterNetworking": map[string]any{"dnsNameservers": []any{"8.8.1.1"},
				"internalNetwork": map[string]any{"networkFilter": nil, "subnetFilter": nil, "nodeCidr": "10.0.0.0/24"}},
			"addons":     map[string]any{"kubernetesDashboard": map[string]any{"enabled": true}, "monitoring": map[string]any{"enabled": false}},
			"nodeGroups": []any{map[string]any{"name": "w", "autoscale": "true", "machineCountMin": 1, "machineCountMax": 3}},
		}
	}
	edit := func(f func(v map[string]any)) map[string]any {
		v := stackhpc()
		f(v)
		return v
	}
	tests := []struct {
		name  string
		in    map[string]any
		chart string
		want  map[string]any
		notes []string // substrings, one per note, in order
	}{
		{"chart 0.27: every translation", stackhpc(), "0.27.0", map[string]any{
			"apiServer": map[string]any{"allowedCIDRs": []any{"10.0.0.0/8"}, "enableLoadBalancer": true},
			"clusterNetworking": map[string]any{
				"internalNetwork": map[string]any{"networkFilter": nil, "subnetFilter": nil, "nodeCidr": "10.0.0.0/24", "dnsNameservers": []any{"8.8.1.1"}}},
			"addons":     map[string]any{"monitoring": map[string]any{"enabled": false}},
			"nodeGroups": []any{map[string]any{"name": "w", "autoscale": true, "machineCountMin": 1, "machineCountMax": 3}},
		}, []string{"kubernetesDashboard is dropped", `admits only ["10.0.0.0/8"]`, "moves to clusterNetworking.internalNetwork.dnsNameservers", `w ("true" -> true)`}},
		{"chart 0.19: the dashboard exists, allowedCidrs is read", stackhpc(), "0.19.2",
			edit(func(v map[string]any) { v["nodeGroups"].([]any)[0].(map[string]any)["autoscale"] = true }),
			[]string{"autoscale strings"}},
		{"chart 0.23: allowedCIDRs is not read yet", stackhpc(), "0.23.0",
			edit(func(v map[string]any) {
				delete(v["addons"].(map[string]any), "kubernetesDashboard")
				v["nodeGroups"].([]any)[0].(map[string]any)["autoscale"] = true
			}),
			[]string{"kubernetesDashboard is dropped", "autoscale strings"}},
		{"unknown chart version: only what holds for every chart", stackhpc(), "main",
			edit(func(v map[string]any) { v["nodeGroups"].([]any)[0].(map[string]any)["autoscale"] = true }),
			[]string{"autoscale strings"}},
		{"allowedCIDRs already set wins", edit(func(v map[string]any) {
			v["apiServer"].(map[string]any)["allowedCIDRs"] = []any{"192.0.2.0/24"}
			delete(v["clusterNetworking"].(map[string]any), "dnsNameservers")
			delete(v["addons"].(map[string]any), "kubernetesDashboard")
			v["nodeGroups"] = []any{}
		}), "0.27.0", map[string]any{
			"apiServer":         map[string]any{"allowedCIDRs": []any{"192.0.2.0/24"}, "enableLoadBalancer": true},
			"clusterNetworking": map[string]any{"internalNetwork": map[string]any{"networkFilter": nil, "subnetFilter": nil, "nodeCidr": "10.0.0.0/24"}},
			"addons":            map[string]any{"monitoring": map[string]any{"enabled": false}},
			"nodeGroups":        []any{},
		}, []string{"allowedCIDRs is set and wins"}},
		{"empty and null old keys are dropped", edit(func(v map[string]any) {
			v["apiServer"].(map[string]any)["allowedCidrs"] = []any{}
			v["clusterNetworking"].(map[string]any)["dnsNameservers"] = nil
			delete(v["addons"].(map[string]any), "kubernetesDashboard")
			v["nodeGroups"] = []any{}
		}), "0.27.0", map[string]any{
			"apiServer":         map[string]any{"enableLoadBalancer": true},
			"clusterNetworking": map[string]any{"internalNetwork": map[string]any{"networkFilter": nil, "subnetFilter": nil, "nodeCidr": "10.0.0.0/24"}},
			"addons":            map[string]any{"monitoring": map[string]any{"enabled": false}},
			"nodeGroups":        []any{},
		}, []string{"allowedCidrs (empty) is dropped", "dnsNameservers (empty, deprecated) is dropped"}},
		{"internal nameservers already set win", edit(func(v map[string]any) {
			v["clusterNetworking"].(map[string]any)["internalNetwork"].(map[string]any)["dnsNameservers"] = []any{"1.1.1.1"}
			delete(v["apiServer"].(map[string]any), "allowedCidrs")
			delete(v["addons"].(map[string]any), "kubernetesDashboard")
			v["nodeGroups"] = []any{}
		}), "0.27.0", map[string]any{
			"apiServer": map[string]any{"enableLoadBalancer": true},
			"clusterNetworking": map[string]any{
				"internalNetwork": map[string]any{"networkFilter": nil, "subnetFilter": nil, "nodeCidr": "10.0.0.0/24", "dnsNameservers": []any{"1.1.1.1"}}},
			"addons":     map[string]any{"monitoring": map[string]any{"enabled": false}},
			"nodeGroups": []any{},
		}, []string{"internalNetwork.dnsNameservers is set and wins"}},
		{`a "false" string was truthy and stays so; defaults too`, map[string]any{
			"nodeGroupDefaults": map[string]any{"autoscale": ""},
			"nodeGroups":        []any{map[string]any{"name": "w", "autoscale": "false"}},
		}, "0.27.0", map[string]any{
			"nodeGroupDefaults": map[string]any{"autoscale": false},
			"nodeGroups":        []any{map[string]any{"name": "w", "autoscale": true}},
		}, []string{`nodeGroupDefaults ("" -> false) w ("false" -> true)`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			notes := translate(tt.in, tt.chart)
			if tt.chart == "0.27.0" {
				// What a chart from 0.27 on keeps passes its strict schema.
				assertStrictSchema(t, tt.in)
			}
			if !reflect.DeepEqual(tt.in, tt.want) {
				got, _ := yaml.Marshal(tt.in)
				want, _ := yaml.Marshal(tt.want)
				t.Errorf("translated:\n%s\nwant:\n%s", got, want)
			}
			if len(notes) != len(tt.notes) {
				t.Fatalf("notes %q, want %d", notes, len(tt.notes))
			}
			for i, n := range tt.notes {
				if !strings.Contains(notes[i], n) {
					t.Errorf("note %d %q does not mention %q", i, notes[i], n)
				}
			}
		})
	}
}

func TestAdoptCounts(t *testing.T) {
	tests := []struct {
		name      string
		deployed  map[string]any
		rendered  map[string]any
		wantCP    any
		wantNames []string
		wantGroup map[string]map[string]any // by name, the whole entry
		wantNote  string
	}{
		{"resize keeps every other key of the group",
			small("1.30.4", "img", group("w", 2, "machineFlavor", "old-flavor-name", "nodeLabels", map[string]any{"a": "b"})),
			small("1.30.4", "img", group("w", 3)), 3, []string{"w"},
			map[string]map[string]any{"w": {"name": "w", "machineFlavor": "old-flavor-name", "machineCount": 3, "nodeLabels": map[string]any{"a": "b"}}}, ""},
		{"control plane count",
			small("1.30.4", "img", group("w", 2)),
			func() map[string]any {
				v := small("1.30.4", "img", group("w", 2))
				put(v, 5, "controlPlane", "machineCount")
				return v
			}(),
			5, []string{"w"}, nil, ""},
		{"autoscaling turned on takes the bounds",
			small("1.30.4", "img", group("w", 2)),
			small("1.30.4", "img", group("w", 2, "autoscale", true, "machineCountMin", 1, "machineCountMax", 5)), 3, []string{"w"},
			map[string]map[string]any{"w": {"name": "w", "machineFlavor": "ds4G", "machineCount": 2, "autoscale": true, "machineCountMin": 1, "machineCountMax": 5}}, ""},
		{"autoscaling turned off drops the bounds",
			small("1.30.4", "img", group("w", 2, "autoscale", "true", "machineCountMin", 1, "machineCountMax", 5)),
			small("1.30.4", "img", group("w", 2)), 3, []string{"w"},
			map[string]map[string]any{"w": {"name": "w", "machineFlavor": "ds4G", "machineCount": 2}}, ""},
		{"a new group is appended whole, deployed order kept",
			small("1.30.4", "img", group("b", 1), group("a", 1)),
			small("1.30.4", "img", group("a", 1), group("b", 1), group("c", 2, "nodeLabels", map[string]any{"x": "y"})), 3, []string{"b", "a", "c"},
			map[string]map[string]any{"c": {"name": "c", "machineFlavor": "ds4G", "machineCount": 2, "nodeLabels": map[string]any{"x": "y"}}},
			"node group c is new"},
		{"a removed group goes",
			small("1.30.4", "img", group("a", 1), group("b", 1)),
			small("1.30.4", "img", group("a", 1)), 3, []string{"a"}, nil, ""},
		{"no deployed list",
			map[string]any{"kubernetesVersion": "1.30.4", "machineImageId": "img"},
			small("1.30.4", "img", group("a", 1)), 3, []string{"a"}, nil, "node group a is new"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := Adopt(AdoptInput{Deployed: tt.deployed, DeployedChart: "0.27.0", Rendered: tt.rendered, RenderedChart: "0.27.0"})
			if err != nil {
				t.Fatal(err)
			}
			if a.Mode != ValuesAdopted {
				t.Fatalf("mode %s", a.Mode)
			}
			if cp, _ := lookup(a.Values, "controlPlane", "machineCount"); cp != tt.wantCP {
				t.Errorf("control plane count %v, want %v", cp, tt.wantCP)
			}
			var names []string
			for _, g := range a.Values["nodeGroups"].([]any) {
				g := g.(map[string]any)
				names = append(names, g["name"].(string))
				if want, ok := tt.wantGroup[g["name"].(string)]; ok && !reflect.DeepEqual(g, want) {
					t.Errorf("group %s = %v, want %v", g["name"], g, want)
				}
			}
			if !reflect.DeepEqual(names, tt.wantNames) {
				t.Errorf("groups %v, want %v", names, tt.wantNames)
			}
			joined := strings.Join(a.Notes, "\n")
			if tt.wantNote != "" && !strings.Contains(joined, tt.wantNote) {
				t.Errorf("notes %q do not mention %q", a.Notes, tt.wantNote)
			}
		})
	}
}

func TestAdoptRefusesMalformedGroups(t *testing.T) {
	tests := []struct {
		name     string
		deployed any
		problem  string
	}{
		{"not a list", map[string]any{"name": "w"}, "not a list"},
		{"unnamed", []any{map[string]any{"machineCount": 1}}, "nodeGroups[0] has no name"},
		{"not a map", []any{"w"}, "nodeGroups[0] has no name"},
		{"duplicate", []any{map[string]any{"name": "w"}, map[string]any{"name": "w"}}, "two groups named w"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			deployed := small("1.30.4", "img")
			deployed["nodeGroups"] = tt.deployed
			_, err := Adopt(AdoptInput{Deployed: deployed, DeployedChart: "0.27.0", Rendered: small("1.30.4", "img", group("w", 1)), RenderedChart: "0.27.0"})
			var adoptErr *AdoptError
			if !errors.As(err, &adoptErr) || !adoptErr.FailedPrecondition() || !strings.Contains(err.Error(), tt.problem) {
				t.Fatalf("error %v, want an AdoptError mentioning %q", err, tt.problem)
			}
		})
	}
}

// adoptOutcome is what a golden file of one adoption holds: the decision and
// exactly what the operator's preview (DiffValues) would list.
type adoptOutcome struct {
	Mode         string   `json:"mode"`
	ChartVersion string   `json:"chartVersion"`
	Notes        []string `json:"notes,omitempty"`
	Changes      []string `json:"changes"`
}

// TestAdoptStackHPCGolden adopts the values the StackHPC driver deployed for
// testdata/build/stackhpc-adopted.json through Magnum's operations on that
// cluster, and checks what each would change.
func TestAdoptStackHPCGolden(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "adopt", "stackhpc-1.4.0.deployed.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var deployed map[string]any
	if err := yaml.Unmarshal(data, &deployed); err != nil {
		t.Fatal(err)
	}
	nodeGroup := func(in *Input, name string) *NodeGroup {
		for i := range in.NodeGroups {
			if in.NodeGroups[i].Name == name {
				return &in.NodeGroups[i]
			}
		}
		t.Fatalf("no node group %s", name)
		return nil
	}
	tests := []struct {
		name   string
		change func(in *Input)
		// want are lines the changes must include (the golden file has all).
		want []string
	}{
		{"unchanged", func(in *Input) {}, []string{
			"+ clusterAnnotations.magnum-capi/values: \"adopted\"",
			"- addons.kubernetesDashboard.enabled: false",
			"- apiServer.allowedCidrs: [\"0.0.0.0/0\"]",
			"+ apiServer.allowedCIDRs: [\"0.0.0.0/0\"]",
			"- clusterNetworking.dnsNameservers: [\"8.8.1.1\"]",
			"+ clusterNetworking.internalNetwork.dnsNameservers: [\"8.8.1.1\"]",
		}},
		{"resize", func(in *Input) { nodeGroup(in, "default-worker").NodeCount = 3 }, []string{
			"~ nodeGroups[name=default-worker].machineCount: 2 -> 3",
		}},
		{"control-plane-resize", func(in *Input) { nodeGroup(in, "default-master").NodeCount = 5 }, []string{
			"~ controlPlane.machineCount: 3 -> 5",
		}},
		{"nodegroup-create", func(in *Input) {
			in.NodeGroups = append(in.NodeGroups, NodeGroup{UUID: "b0000000-0000-4000-8000-000000000005", Name: "gpu", Role: "worker",
				FlavorID: "ds8G", NodeCount: 2, Status: "CREATE_IN_PROGRESS"})
		}, []string{
			"+ nodeGroups[name=gpu]: {\"machineCount\":2,\"machineFlavor\":\"ds8G\",\"name\":\"gpu\"}",
		}},
		{"nodegroup-delete", func(in *Input) { nodeGroup(in, "nineteen-characters").Status = "DELETE_IN_PROGRESS" }, []string{
			"- nodeGroups[name=nineteen-characters]: {\"machineCount\":1,\"machineFlavor\":\"ds8G\",\"name\":\"nineteen-characters\"}",
		}},
		{"upgrade", func(in *Input) {
			in.Image = Image{ID: "7f8e9d0c-1b2a-4c3d-8e4f-5a6b7c8d9e0f", OSDistro: "ubuntu", KubeVersion: "v1.31.1"}
		}, []string{
			"~ kubernetesVersion: \"1.30.4\" -> \"1.31.1\"",
			"+ registryMirrors: null",
			"+ clusterAnnotations.magnum-capi/values: \"managed\"",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := readInput(t, filepath.Join("testdata", "build", "stackhpc-adopted.json"))
			tt.change(&in)
			res, err := Build(in, DefaultConfig())
			if err != nil {
				t.Fatal(err)
			}
			a, err := Adopt(AdoptInput{Deployed: deployed, DeployedChart: "0.27.0", Rendered: res.Values, RenderedChart: res.ChartVersion})
			if err != nil {
				t.Fatal(err)
			}
			assertStrictSchema(t, a.Values)
			o := adoptOutcome{Mode: a.Mode, ChartVersion: a.ChartVersion, Notes: a.Notes, Changes: []string{}}
			for _, c := range DiffValues(deployed, a.Values) {
				o.Changes = append(o.Changes, c.String())
			}
			for _, w := range tt.want {
				if !contains(o.Changes, w) {
					t.Errorf("changes lack %q:\n%s", w, strings.Join(o.Changes, "\n"))
				}
			}
			out, err := yaml.Marshal(o)
			if err != nil {
				t.Fatal(err)
			}
			assertGolden(t, filepath.Join("testdata", "adopt", tt.name+".golden.yaml"), out)
		})
	}
}

func contains(list []string, s string) bool {
	for _, item := range list {
		if item == s {
			return true
		}
	}
	return false
}
