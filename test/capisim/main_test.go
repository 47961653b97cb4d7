package capisim_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/magnum-capi/magnum-capi/test/capisim"
	"github.com/magnum-capi/magnum-capi/test/testbed"
)

// step is the simulator's pace in these tests: short, yet long enough for
// the steps to be observable by polling.
const step = 100 * time.Millisecond

// converge bounds how long a cluster may take to reach a state; generous,
// because the two cores are shared.
const converge = 90 * time.Second

var (
	env *testbed.Env
	sim *capisim.Simulator
)

var (
	gvkOSC  = schema.GroupVersionKind{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta1", Kind: "OpenStackCluster"}
	gvkOSM  = schema.GroupVersionKind{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta1", Kind: "OpenStackMachine"}
	gvkOSMT = schema.GroupVersionKind{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta1", Kind: "OpenStackMachineTemplate"}
	gvkHR   = schema.GroupVersionKind{Group: "addons.stackhpc.com", Version: "v1alpha1", Kind: "HelmRelease"}
	gvkMF   = schema.GroupVersionKind{Group: "addons.stackhpc.com", Version: "v1alpha1", Kind: "Manifests"}
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	var logger *slog.Logger
	if os.Getenv("CAPISIM_LOG") != "" {
		logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
		ctrllog.SetLogger(logr.FromSlogHandler(logger.Handler()))
	} else {
		// Quiet controller-runtime's complaint about a missing logger.
		ctrllog.SetLogger(logr.Discard())
	}
	var err error
	if env, err = testbed.Start(ctx, testbed.Options{}); err != nil {
		fmt.Fprintln(os.Stderr, "starting the test bed:", err)
		return 1
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the test bed:", err)
		}
	}()
	if sim, err = capisim.Start(context.Background(), env.Config, capisim.Options{Step: step, Logger: logger}); err != nil {
		fmt.Fprintln(os.Stderr, "starting the simulator:", err)
		return 1
	}
	defer func() {
		if err := sim.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the simulator:", err)
		}
	}()
	return m.Run()
}
