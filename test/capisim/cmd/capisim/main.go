// Command capisim runs the Cluster API simulator against a management
// cluster until interrupted, for tests that run the test bed in another
// process (the Python end-to-end tests):
//
//	capisim -kubeconfig /tmp/magnum-capi-testbed-x/kubeconfig -step 200ms
//
// Faults are injected with Cluster annotations or the capisim ConfigMap; see
// the package documentation of test/capisim.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/magnum-capi/magnum-capi/test/capisim"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "capisim:", err)
		os.Exit(1)
	}
}

func run() error {
	// An own flag set: controller-runtime registers -kubeconfig on the
	// global one.
	flags := flag.NewFlagSet("capisim", flag.ContinueOnError)
	kubeconfig := flags.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig of the management cluster")
	step := flags.Duration("step", 0, "delay between two simulated steps of an object (default 200ms)")
	workers := flags.Int("workers", 0, "concurrent reconciles per kind (default 8)")
	verbose := flags.Bool("v", false, "log what the controllers do")
	if err := flags.Parse(os.Args[1:]); err != nil {
		return err
	}
	if *kubeconfig == "" {
		return fmt.Errorf("-kubeconfig (or KUBECONFIG) is required")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return fmt.Errorf("reading kubeconfig %s: %w", *kubeconfig, err)
	}
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	sim, err := capisim.Start(ctx, cfg, capisim.Options{Step: *step, Workers: *workers, Logger: logger})
	if err != nil {
		return err
	}
	logger.Warn("simulating Cluster API", "kubeconfig", *kubeconfig)
	<-ctx.Done()
	return sim.Stop()
}
