package keystone

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckFilesNamesWhatIsMissingAndTheFix(t *testing.T) {
	present := filepath.Join(t.TempDir())
	tests := []struct {
		name    string
		files   []string
		missing []string
	}{
		{"all present", []string{present}, nil},
		{"one missing", []string{present, "/nonexistent/uwsgi"}, []string{"/nonexistent/uwsgi"}},
		{"two missing", []string{"/nonexistent/a", "/nonexistent/b"}, []string{"/nonexistent/a", "/nonexistent/b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkFiles(tt.files...)
			if len(tt.missing) == 0 {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrMissingPackages) {
				t.Fatalf("error %v is not ErrMissingPackages", err)
			}
			for _, want := range append(tt.missing, "hack/deps.sh") {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %s", err, want)
				}
			}
		})
	}
}
