package helmvalues

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClip(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"short", "short"},
		{strings.Repeat("a", 128), strings.Repeat("a", 128)},
		{strings.Repeat("a", 129), strings.Repeat("a", 64) + "… (129 bytes)"},
		// 3-byte runes: the cut goes back to a character boundary.
		{strings.Repeat("集", 100), strings.Repeat("集", 21) + "… (300 bytes)"},
	} {
		got := Clip(tc.in)
		if got != tc.want || !utf8.ValidString(got) {
			t.Errorf("Clip(%d bytes) = %q, want %q", len(tc.in), got, tc.want)
		}
	}
	err := &FieldError{Field: "labels.availability_zone", Value: strings.Repeat("z", 60<<10), Expected: "a plain name"}
	if msg := err.Error(); len(msg) > 256 || !strings.Contains(msg, "61440 bytes") {
		t.Errorf("FieldError with a 60 KiB value: %d bytes %q", len(msg), msg)
	}
}

func TestIsReleaseName(t *testing.T) {
	for id, want := range map[string]bool{
		"slice-abcdefghijkl":     true,
		"k-hl-prod-2iggmkze5vjt": true,
		strings.Repeat("a", 43):  true,
		strings.Repeat("a", 44):  false,
		"":                       false,
		"../etc":                 false,
		"Upper-abcdefghijkl":     false,
		"-lead":                  false,
		"trail-":                 false,
	} {
		if got := IsReleaseName(id); got != want {
			t.Errorf("IsReleaseName(%q) = %v, want %v", id, got, want)
		}
	}
}
