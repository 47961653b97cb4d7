package main

import (
	"context"
	"fmt"
	"io"
)

// command is one subcommand. run returns the process exit code; 2 means the
// input was invalid.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

// commands are every subcommand, in the order usage lists them.
var commands = []command{
	{name: "serve", summary: "run the gRPC sidecar beside magnum-conductor", run: runServe},
	{name: "health", summary: "exit 0 if the sidecar at --address is SERVING (container health checks)", run: runHealth},
	{name: "render", summary: "Magnum objects (JSON) -> openstack-cluster Helm values; --diff previews an upgrade, --deployed a change to a deployed release", run: runRender},
	{name: "status", summary: "CAPI objects -> the Magnum status the driver would report", run: runStatus},
	{name: "version", summary: "print the version", run: runVersion},
}

// lookup is the command called name.
func lookup(name string) (command, bool) {
	for _, c := range commands {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

func runVersion(_ context.Context, _ []string, _ io.Reader, stdout, _ io.Writer) int {
	fmt.Fprintln(stdout, version)
	return 0
}
