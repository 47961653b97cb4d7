package testbed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// Options tune a test bed. The zero value is a complete management cluster.
type Options struct {
	// Dir receives the admin kubeconfig; a new temporary directory when empty.
	Dir string
	// Out receives kube-apiserver's and etcd's output; nil discards it.
	Out io.Writer
}

// Env is a running test bed.
type Env struct {
	// Config is an admin (system:masters) connection to the API server.
	Config *rest.Config
	// Client is a controller-runtime client over Config that knows every
	// Cluster API kind at every served version.
	Client client.Client
	Scheme *runtime.Scheme
	// KubeconfigPath is an admin kubeconfig file for Helm, kubectl and the
	// sidecar.
	KubeconfigPath string
	// Dir holds the kubeconfig and anything else a test bed writes.
	Dir string

	env         *envtest.Environment
	guard       *orphanGuard
	ownDir      bool
	stopWebhook context.CancelFunc
	webhookDone chan error
}

// Start boots etcd and kube-apiserver, installs the CAPI CRDs wired to a
// conversion webhook running CAPI's own conversion code, installs the CAPO and
// addon-provider CRDs, and writes an admin kubeconfig. Stop it with Stop.
func Start(ctx context.Context, opts Options) (_ *Env, err error) {
	assets, err := AssetsDir(ctx)
	if err != nil {
		return nil, err
	}
	capiDir, err := capiModuleDir(ctx)
	if err != nil {
		return nil, err
	}
	// controller-runtime complains, with a stack trace, unless a logger is set.
	ctrllog.SetLogger(logr.Discard())
	e := &Env{Scheme: NewScheme(), Dir: opts.Dir}
	if e.Dir != "" {
		if err := os.MkdirAll(e.Dir, 0o700); err != nil {
			return nil, err
		}
	} else {
		if e.Dir, err = os.MkdirTemp("", "magnum-capi-testbed-"); err != nil {
			return nil, err
		}
		e.ownDir = true
	}
	defer func() {
		if err != nil {
			_ = e.Stop()
		}
	}()

	e.env = &envtest.Environment{
		BinaryAssetsDirectory: assets,
		Scheme:                e.Scheme,
		CRDDirectoryPaths:     capiCRDDirs(capiDir),
		ErrorIfCRDPathMissing: true,
		// The CAPI CRDs ship without their conversion webhook. envtest points
		// each one at the local webhook below; "ignore scheme convertible"
		// because CAPI registers converters instead of Hub/Convertible types.
		WebhookInstallOptions: envtest.WebhookInstallOptions{
			LocalServingHost:        "127.0.0.1",
			IgnoreSchemeConvertible: true,
		},
		ControlPlaneStartTimeout: 2 * time.Minute,
		ControlPlaneStopTimeout:  time.Minute,
	}
	// A certificate directory of our own, not a random one envtest removes
	// on Stop: RestartAPIServer then brings kube-apiserver back with the same
	// serving and client CAs, so existing kubeconfigs keep working.
	apiServerDir := filepath.Join(e.Dir, "kube-apiserver")
	if err := os.MkdirAll(apiServerDir, 0o700); err != nil {
		return nil, err
	}
	e.env.ControlPlane.GetAPIServer().CertDir = apiServerDir
	// etcd's data in the test bed's directory too, so that the directory
	// names every process of this test bed (see orphanGuard).
	e.env.ControlPlane.Etcd = &envtest.Etcd{DataDir: filepath.Join(e.Dir, "etcd")}
	if e.guard, err = startOrphanGuard(e.Dir + string(filepath.Separator)); err != nil {
		return nil, err
	}
	if opts.Out != nil {
		e.env.ControlPlane.GetAPIServer().Out = opts.Out
		e.env.ControlPlane.GetAPIServer().Err = opts.Out
	}
	if e.Config, err = e.env.Start(); err != nil {
		return nil, fmt.Errorf("starting kube-apiserver and etcd from %s: %w", assets, err)
	}
	// The provider CRDs serve one version each and need no conversion, so
	// they are installed apart from the webhook wiring.
	if _, err = envtest.InstallCRDs(e.Config, envtest.CRDInstallOptions{
		Paths: providerCRDDirs(), ErrorIfPathMissing: true, Scheme: e.Scheme,
	}); err != nil {
		return nil, fmt.Errorf("installing CAPO and addon CRDs: %w", err)
	}
	if e.Client, err = client.New(e.Config, client.Options{Scheme: e.Scheme}); err != nil {
		return nil, err
	}
	if err = e.startConversion(); err != nil {
		return nil, err
	}
	if err = e.writeKubeconfig(); err != nil {
		return nil, err
	}
	return e, nil
}

func (e *Env) startConversion() error {
	useResolver(&apiVersionResolver{reader: e.Client})
	wio := e.env.WebhookInstallOptions
	srv, err := newConversionServer(e.Scheme, wio.LocalServingHost, wio.LocalServingPort, wio.LocalServingCertDir)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	e.stopWebhook, e.webhookDone = cancel, make(chan error, 1)
	go func() { e.webhookDone <- srv.Start(ctx) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if srv.StartedChecker()(&http.Request{}) == nil {
			return nil
		}
		select {
		case err := <-e.webhookDone:
			return fmt.Errorf("conversion webhook stopped: %w", err)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return errors.New("conversion webhook did not start within 30s")
		}
	}
}

func (e *Env) writeKubeconfig() error {
	user, err := e.env.ControlPlane.AddUser(envtest.User{Name: "testbed-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return fmt.Errorf("creating the admin user: %w", err)
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		return err
	}
	e.KubeconfigPath = filepath.Join(e.Dir, "kubeconfig")
	return os.WriteFile(e.KubeconfigPath, kubeconfig, 0o600)
}

// AddUser makes a user with the given groups (none: only what RBAC grants)
// and returns its kubeconfig file path, for tests of least privilege.
func (e *Env) AddUser(name string, groups ...string) (string, *rest.Config, error) {
	user, err := e.env.ControlPlane.AddUser(envtest.User{Name: name, Groups: groups}, nil)
	if err != nil {
		return "", nil, err
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		return "", nil, err
	}
	path := filepath.Join(e.Dir, "kubeconfig-"+name)
	if err := os.WriteFile(path, kubeconfig, 0o600); err != nil {
		return "", nil, err
	}
	return path, user.Config(), nil
}

// Stop shuts the webhook and control plane down and removes what Start
// created. It is safe on a partly started Env.
func (e *Env) Stop() error {
	var errs []error
	if e.stopWebhook != nil {
		e.stopWebhook()
		<-e.webhookDone
	}
	if e.env != nil {
		if err := e.env.Stop(); err != nil {
			errs = append(errs, err)
		}
	}
	errs = append(errs, e.guard.release())
	if e.ownDir {
		errs = append(errs, os.RemoveAll(e.Dir))
	}
	return errors.Join(errs...)
}

// EtcdURL is the client URL of the test bed's etcd, for loaders that write
// objects where kube-apiserver keeps them (a shortcut no cloud takes: only
// benchmarks that need tens of thousands of copies use it).
func (e *Env) EtcdURL() string { return e.env.ControlPlane.Etcd.URL.String() }
