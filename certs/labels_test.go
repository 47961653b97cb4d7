package certs

import (
	"strings"
	"testing"
)

func TestLabelValue(t *testing.T) {
	tests := []struct{ in, want string }{
		{"0123456789abcdef0123456789abcdef", "0123456789abcdef0123456789abcdef"},
		{"5d12f6fd-a196-4bf0-ae4c-1f639a523a52", "5d12f6fd-a196-4bf0-ae4c-1f639a523a52"},
		{strings.Repeat("a", 64), strings.Repeat("a", 63)},
		{"user@example.com", "user_example.com"},
		{"-x-", "x"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := labelValue(tt.in); got != tt.want {
			t.Errorf("labelValue(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
