// Command capi-controllers runs the real Cluster API controllers of the
// test bed (package capicontrollers) against a management cluster until
// interrupted. It prints "ready" on standard output once objects written
// are defaulted and reconciled; logs go to standard error.
//
//	capi-controllers -kubeconfig FILE [-step 200ms] [-connection-retry 30s] [-log-level info]
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/magnum-capi/magnum-capi/test/capicontrollers"
)

func main() {
	// A flag set of our own: controller-runtime registers -kubeconfig on
	// the global one.
	flag := flag.NewFlagSet("capi-controllers", flag.ExitOnError)
	kubeconfig := flag.String("kubeconfig", "", "admin kubeconfig of the management cluster (required)")
	step := flag.Duration("step", 200*time.Millisecond, "OpenStack's pace: how long each step of the fake provider takes")
	concurrency := flag.Int("concurrency", 10, "concurrent reconciles per controller")
	syncPeriod := flag.Duration("sync-period", 10*time.Minute, "how often every object is reconciled anyway")
	connectionRetry := flag.Duration("connection-retry", 0, "how soon to retry connecting to a workload cluster (default: Cluster API's 30s)")
	gates := flag.String("feature-gates", "", "Cluster API feature gates, e.g. ReconcilerRateLimiting=false")
	capiDir := flag.String("capi-dir", "", "the sigs.k8s.io/cluster-api module directory (default: found in the module cache)")
	workDir := flag.String("work-dir", "", "where the webhook certificate is kept (default: a temporary directory)")
	level := flag.String("log-level", "info", "debug, info, warn or error")
	_ = flag.Parse(os.Args[1:])
	opts := capicontrollers.Options{
		Step: *step, Concurrency: *concurrency, SyncPeriod: *syncPeriod, ConnectionRetry: *connectionRetry, FeatureGates: *gates,
		CAPIDir: *capiDir, WorkDir: *workDir,
	}
	if err := run(*kubeconfig, opts, *level); err != nil {
		fmt.Fprintln(os.Stderr, "capi-controllers:", err)
		os.Exit(1)
	}
}

func run(kubeconfig string, opts capicontrollers.Options, level string) error {
	if kubeconfig == "" {
		return fmt.Errorf("-kubeconfig is required")
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(level)); err != nil {
		return fmt.Errorf("-log-level %q: %w", level, err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return fmt.Errorf("reading %s: %w", kubeconfig, err)
	}
	// Cluster API's own managers run with these client limits.
	cfg.QPS, cfg.Burst = 20, 30
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	opts.Logger = slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: lvl}))
	return capicontrollers.Run(ctx, cfg, opts, func() { fmt.Println("ready") })
}
