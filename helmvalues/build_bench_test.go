package helmvalues

import (
	"path/filepath"
	"testing"
)

// BenchmarkBuild is the values generation of one cluster per create or
// update: each golden input that renders, through
// Build, as the sidecar calls it. `make bench` reports ns/op and allocs/op.
func BenchmarkBuild(b *testing.B) {
	for _, name := range []string{"minimal", "full", "cilium-flatcar"} {
		path := filepath.Join("testdata", "build", name+".json")
		in, cfg := readInput(b, path), readConfig(b, path)
		if _, err := Build(in, cfg); err != nil {
			b.Fatalf("%s: %v", path, err)
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Build(in, cfg); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDiffValues is the comparison of a deployed release's values with
// newly rendered ones that every update makes (a resize of the full input's
// first worker node group).
func BenchmarkDiffValues(b *testing.B) {
	path := filepath.Join("testdata", "build", "full.json")
	in, cfg := readInput(b, path), readConfig(b, path)
	old, err := Build(in, cfg)
	if err != nil {
		b.Fatal(err)
	}
	worker := -1
	for i, ng := range in.NodeGroups {
		if ng.Role == "worker" && worker < 0 {
			worker = i
		}
	}
	if worker < 0 {
		b.Fatalf("%s has no worker node group", path)
	}
	in.NodeGroups[worker].NodeCount++
	resized, err := Build(in, cfg)
	if err != nil {
		b.Fatal(err)
	}
	if len(DiffValues(old.Values, resized.Values)) == 0 {
		b.Fatal("a resize changed no value")
	}
	b.ReportAllocs()
	for b.Loop() {
		DiffValues(old.Values, resized.Values)
	}
}
