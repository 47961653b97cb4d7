// Command magnum-capi is the Cluster API driver's sidecar and operator tool.
//
//	magnum-capi serve    the gRPC sidecar beside magnum-conductor
//	magnum-capi render   Magnum objects (JSON) -> openstack-cluster Helm values
//	magnum-capi status   CAPI objects -> the Magnum status the driver would report
//	magnum-capi version  print the version
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"syscall"
)

// version is set at link time: -ldflags "-X main.version=...".
var version = "dev"

// command is one subcommand. run returns the process exit code; 2 means the
// input was invalid.
type command struct {
	summary string
	run     func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

// commands is filled by each subcommand's file in an init function, so adding a
// subcommand touches only its own file.
var commands = map[string]command{
	"version": {summary: "print the version", run: func(_ context.Context, _ []string, _ io.Reader, stdout, _ io.Writer) int {
		fmt.Fprintln(stdout, version)
		return 0
	}},
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := dispatch(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func dispatch(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		return 2
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "magnum-capi: unknown command %q\n", args[0])
		usage(stderr)
		return 2
	}
	return cmd.run(ctx, args[1:], stdin, stdout, stderr)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: magnum-capi <command> [flags]")
	names := make([]string, 0, len(commands))
	for name := range commands {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(w, "  %-8s %s\n", name, commands[name].summary)
	}
}
