package release

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/magnum-capi/magnum-capi/test/chartrepo"
	"github.com/magnum-capi/magnum-capi/test/testchart"
)

// TestLocalSources: a chart directory, one archive, and a directory of
// archives; the version must be the chart's own.
func TestLocalSources(t *testing.T) {
	archives := t.TempDir()
	var archive string
	for _, c := range published() {
		path, _, _, err := chartrepo.Package(c, archives)
		if err != nil {
			t.Fatal(err)
		}
		if archive == "" {
			archive = path
		}
	}
	tests := []struct {
		name, path, version string
		ok                  bool
	}{
		{"chart directory", testchart.Dir(), v0, true},
		{"chart directory, another version", testchart.Dir(), v1, false},
		{"archive", archive, v0, true},
		{"archive, another version", archive, v1, false},
		{"directory of archives", archives, v1, true},
		{"directory of archives, missing version", archives, "0.26.0", false},
		{"no such path", filepath.Join(archives, "nope"), v0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCharts(t, Source{Repository: tt.path, Name: chartName}, CacheOptions{})
			ch, err := c.Load(context.Background(), tt.version)
			if !tt.ok {
				wantError[*ChartNotFoundError](t, err, tt.path, tt.version)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ch.Metadata.Version != tt.version || ch.Name() != chartName {
				t.Errorf("loaded %s %s", ch.Name(), ch.Metadata.Version)
			}
		})
	}
}
