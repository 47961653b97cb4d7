// Command magnum-capi is the Cluster API driver's sidecar and operator tool.
//
//	magnum-capi serve    the gRPC sidecar beside magnum-conductor
//	magnum-capi health   exit 0 if a running sidecar is SERVING
//	magnum-capi render   Magnum objects (JSON) -> openstack-cluster Helm values
//	magnum-capi status   CAPI objects -> the Magnum status the driver would report
//	magnum-capi version  print the version
//
// Each command lives in its own file (serve.go, health.go, ...);
// commands.go lists them all, in the order usage shows them.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// version is set at link time: -ldflags "-X main.version=...".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := dispatch(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func dispatch(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stdout)
		return 0
	}
	cmd, ok := lookup(args[0])
	if !ok {
		fmt.Fprintf(stderr, "magnum-capi: unknown command %q\n", args[0])
		usage(stderr)
		return 2
	}
	return cmd.run(ctx, args[1:], stdin, stdout, stderr)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: magnum-capi <command> [flags]")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
}
