package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestHelp: asking for usage is not an error, for the binary and for every
// subcommand; a wrong flag still is (exit 2).
func TestHelp(t *testing.T) {
	tests := []struct {
		args     []string
		wantCode int
		wantOut  string
	}{
		{[]string{"--help"}, 0, "usage: magnum-capi <command>"},
		{[]string{"-h"}, 0, "usage: magnum-capi <command>"},
		{[]string{"help"}, 0, "usage: magnum-capi <command>"},
		{nil, 2, "usage: magnum-capi <command>"},
		{[]string{"serve", "--no-such-flag"}, 2, "unknown flag"},
		{[]string{"health", "--no-such-flag"}, 2, "flag provided but not defined"},
	}
	for _, c := range commands {
		if c.name == "version" {
			continue // takes no flags; prints the version whatever follows
		}
		for _, h := range []string{"--help", "-h"} {
			tests = append(tests, struct {
				args     []string
				wantCode int
				wantOut  string
			}{[]string{c.name, h}, 0, "-"})
		}
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := dispatch(context.Background(), tt.args, strings.NewReader(""), &stdout, &stderr)
			if code != tt.wantCode || !strings.Contains(stdout.String()+stderr.String(), tt.wantOut) {
				t.Errorf("exit %d, output %q%q; want exit %d mentioning %q", code, stdout.String(), stderr.String(), tt.wantCode, tt.wantOut)
			}
		})
	}
}
