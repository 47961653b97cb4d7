package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/magnum-capi/magnum-capi/test/chartrepo"
	"github.com/magnum-capi/magnum-capi/test/keystone"
	"github.com/magnum-capi/magnum-capi/test/openstackfake"
	"github.com/magnum-capi/magnum-capi/test/realcapi"
	"github.com/magnum-capi/magnum-capi/test/testbed"
)

// Options tune the stack; the zero value is a complete one.
type Options struct {
	// Step is OpenStack's pace in the test bed's OpenStack provider (a
	// network, a load balancer, a server building each take a step).
	Step time.Duration
	// Dir holds everything the stack writes; a new temporary directory
	// (removed by Stop) when empty.
	Dir string
	// Out receives kube-apiserver's and etcd's output; nil discards it.
	Out io.Writer
	// TrusteeDomain creates Magnum's trustee domain ("magnum") and its
	// domain admin in Keystone, for Magnum 15-22's trust_manager (Info's
	// TrusteeDomain). Off for stacks that create them as an operator would
	// (test/magnum runs the operator guide's commands).
	TrusteeDomain bool
	// SecondManagementCluster starts another management cluster (its own
	// kube-apiserver and etcd, CRDs and controllers), which SidecarConfig
	// lists as SecondManagementClusterName after "default".
	SecondManagementCluster bool
}

// SecondManagementClusterName is the second management cluster's name in
// SidecarConfig.
const SecondManagementClusterName = "second"

// Harness is a running stack.
type Harness struct {
	Env *testbed.Env
	// CAPI are the real Cluster API controllers (test/capicontrollers);
	// Faults sets their fault rules.
	CAPI   *realcapi.Controllers
	Faults *realcapi.Rules
	// SecondEnv and SecondCAPI are the second management cluster; nil
	// unless Options.SecondManagementCluster.
	SecondEnv  *testbed.Env
	SecondCAPI *realcapi.Controllers
	Charts     *chartrepo.HTTP
	OpenStack  *openstackfake.Server
	Keystone   *keystone.Keystone
	// Info is what a client needs to use the stack.
	Info   Info
	ownDir bool
}

// Start brings the stack up; on error whatever started is stopped.
func Start(ctx context.Context, opts Options) (_ *Harness, err error) {
	h := &Harness{}
	h.Info.Dir = opts.Dir
	if h.Info.Dir == "" {
		if h.Info.Dir, err = os.MkdirTemp("", "magnum-capi-harness-"); err != nil {
			return nil, err
		}
		h.ownDir = true
	}
	defer func() {
		if err != nil {
			_ = h.Stop()
		}
	}()
	if h.Env, err = testbed.Start(ctx, testbed.Options{Dir: filepath.Join(h.Info.Dir, "testbed"), Out: opts.Out}); err != nil {
		return nil, err
	}
	if h.CAPI, err = realcapi.Start(ctx, realcapi.Options{Kubeconfig: h.Env.KubeconfigPath, Dir: filepath.Join(h.Info.Dir, "capi"), Step: opts.Step}); err != nil {
		return nil, err
	}
	h.Faults = realcapi.NewRules(h.Env.Client)
	if opts.SecondManagementCluster {
		if h.SecondEnv, err = testbed.Start(ctx, testbed.Options{Dir: filepath.Join(h.Info.Dir, "testbed-second"), Out: opts.Out}); err != nil {
			return nil, fmt.Errorf("starting the second management cluster: %w", err)
		}
		if h.SecondCAPI, err = realcapi.Start(ctx, realcapi.Options{Kubeconfig: h.SecondEnv.KubeconfigPath, Dir: filepath.Join(h.Info.Dir, "capi-second"), Step: opts.Step}); err != nil {
			return nil, fmt.Errorf("the second management cluster: %w", err)
		}
	}
	if h.Charts, err = chartrepo.StartHTTP(chartrepo.HTTPOptions{Charts: TestCharts()}); err != nil {
		return nil, fmt.Errorf("starting the chart repository: %w", err)
	}
	h.OpenStack = openstackfake.New()
	if h.Keystone, err = keystone.Start(context.WithoutCancel(ctx), keystone.Options{Dir: filepath.Join(h.Info.Dir, "keystone")}); err != nil {
		return nil, fmt.Errorf("starting Keystone: %w", err)
	}
	if err = h.populate(ctx, opts); err != nil {
		return nil, err
	}
	return h, nil
}

// TestCharts are the chart versions the repository serves: our stand-in for
// openstack-cluster at 0.27.0, and the same chart as 0.27.1 for chart
// upgrades.
func TestCharts() []chartrepo.Chart {
	dir := filepath.Join(testbed.TestdataDir(), "charts", "openstack-cluster")
	return []chartrepo.Chart{{Dir: dir, Version: ChartVersion}, {Dir: dir, Version: NextChartVersion}}
}

// Chart versions the repository serves.
const (
	ChartName        = "openstack-cluster"
	ChartVersion     = "0.27.0"
	NextChartVersion = "0.27.1"
)

// Stop shuts everything down, in reverse order.
func (h *Harness) Stop() error {
	var errs []error
	if h.Keystone != nil {
		errs = append(errs, h.Keystone.Stop())
	}
	if h.OpenStack != nil {
		h.OpenStack.Close()
	}
	if h.Charts != nil {
		errs = append(errs, h.Charts.Close())
	}
	if h.SecondCAPI != nil {
		errs = append(errs, h.SecondCAPI.Stop())
	}
	if h.SecondEnv != nil {
		errs = append(errs, h.SecondEnv.Stop())
	}
	if h.CAPI != nil {
		errs = append(errs, h.CAPI.Stop())
	}
	if h.Env != nil {
		errs = append(errs, h.Env.Stop())
	}
	if h.ownDir {
		errs = append(errs, os.RemoveAll(h.Info.Dir))
	}
	return errors.Join(errs...)
}
