package release

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sort"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	helmkube "helm.sh/helm/v3/pkg/kube"
	"helm.sh/helm/v3/pkg/postrender"
	helmrelease "helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// Options shape every release operation.
type Options struct {
	// HistoryMax bounds the revisions Helm keeps per release (each holds the
	// whole manifest). StackHPC's driver keeps 10.
	HistoryMax int
	// Timeout bounds Helm's hooks and waits; the chart has none, so it rarely
	// matters.
	Timeout time.Duration
	// Observe, when set, receives every operation's duration and outcome
	// (operation is install, upgrade, uninstall or get) for the metrics.
	Observe func(operation string, elapsed time.Duration, err error)
}

// observe reports an operation that started at start; use it deferred.
func (m *Manager) observe(operation string, start time.Time, err *error) {
	if m.opts.Observe != nil {
		m.opts.Observe(operation, time.Since(start), *err)
	}
}

// Manager runs Helm actions against management clusters.
type Manager struct {
	opts      Options
	log       *slog.Logger
	discovery *sharedDiscovery
}

// NewManager returns a Manager; zero options get defaults.
func NewManager(opts Options, log *slog.Logger) *Manager {
	if opts.HistoryMax <= 0 {
		opts.HistoryMax = 10
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 5 * time.Minute
	}
	return &Manager{opts: opts, log: log, discovery: newSharedDiscovery()}
}

// Target is where a release lives: a REST client getter whose default
// namespace is the release's namespace.
type Target struct {
	Getter    genericclioptions.RESTClientGetter
	Namespace string
	// Labels go on the release's storage Secrets and on every object the
	// chart renders (the cluster's uuid and project).
	Labels map[string]string
	// RecordLabels go on the release's storage Secrets only: what the
	// driver records about the release for its later deploys (Release.Labels
	// reads them back). Helm keeps a record label on every later revision
	// until a deploy sets it to "null".
	RecordLabels map[string]string
	// MachineAnnotations go on node groups' MachineDeployments, by node
	// group (the value of their capi.stackhpc.com/node-group label): what
	// the chart has no value for, such as the cluster autoscaler's capacity
	// annotations. Deploy renders them into every revision.
	MachineAnnotations map[string]map[string]string
	// SpecPatches are merged into the spec of the objects they name:
	// settings the chart has no value for. Deploy renders them into every
	// revision.
	SpecPatches []SpecPatch
	// History, when set, is shared by the actions on the release that use
	// this Target: set it only while holding the cluster's lock
	// (records.go). Nil: each action reads the history for itself.
	History *History
	// BeforeWrite, when set, is waited for before the first write of the
	// release record, and its error fails the action with nothing written
	// (records.go). It is called before every write: let it give the
	// result of work already under way.
	BeforeWrite func() error
	// Wrote, when set, is called after each write of the release record
	// that succeeded: from the first, the release has changed.
	Wrote func()
}

// postRenderer adds t's labels, machine annotations and spec patches to
// the rendered objects; nil when there are none.
func (t Target) postRenderer() postrender.PostRenderer {
	if len(t.Labels) == 0 && len(t.MachineAnnotations) == 0 && len(t.SpecPatches) == 0 {
		return nil
	}
	return decorator{labels: t.Labels, machineAnnotations: t.MachineAnnotations, specPatches: t.SpecPatches}
}

// recordLabels are the labels of the release's storage Secrets.
func (t Target) recordLabels() map[string]string {
	if len(t.RecordLabels) == 0 {
		return t.Labels
	}
	out := maps.Clone(t.RecordLabels)
	maps.Copy(out, t.Labels)
	return out
}

// Release is what the driver needs to know about an installed release.
type Release struct {
	Name, Namespace string
	Revision        int
	Status          string
	ChartName       string
	ChartVersion    string
	// Values are the values the release was installed with (the user-supplied
	// document, not merged with chart defaults).
	Values       map[string]any
	LastDeployed time.Time
	// Labels are the release record's own labels (Target.Labels and
	// Target.RecordLabels of the deploys that wrote it), without Helm's.
	Labels map[string]string
	// manifest is what the revision rendered, post-renderer included.
	manifest string
}

// NotFoundError: the release does not exist.
type NotFoundError struct{ Name, Namespace string }

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("release %s not found in namespace %s", e.Name, e.Namespace)
}

// NotFound classifies the error for the gRPC boundary.
func (e *NotFoundError) NotFound() bool { return true }

// config is Helm's configuration for one action on t: our kube client
// (concurrent_writes.go) and our storage driver (records.go), whose reads
// of the release history end with reads.
func (m *Manager) config(t Target, reads context.Context) (*action.Configuration, error) {
	cfg := new(action.Configuration)
	debug := func(format string, v ...any) { m.log.Debug(fmt.Sprintf(format, v...), "namespace", t.Namespace) }
	if err := cfg.Init(t.Getter, t.Namespace, "secret", debug); err != nil {
		return nil, fmt.Errorf("helm configuration for namespace %s: %w", t.Namespace, err)
	}
	kc, ok := cfg.KubeClient.(*helmkube.Client)
	if !ok {
		return nil, fmt.Errorf("helm configuration for namespace %s: unexpected kube client %T", t.Namespace, cfg.KubeClient)
	}
	// Objects without a namespace in the chart go to the release namespace.
	kc.Namespace = t.Namespace
	cfg.KubeClient = concurrentWrites{Client: kc}
	clients, err := kc.Factory.KubernetesClientSet()
	if err != nil {
		return nil, fmt.Errorf("helm configuration for namespace %s: %w", t.Namespace, err)
	}
	cfg.Releases = storage.Init(newRecords(clients.CoreV1().Secrets(t.Namespace), reads, t, debug))
	return cfg, nil
}

// Deploy installs the release, or upgrades it with exactly these values
// (nothing reused from earlier revisions): `helm upgrade --install`. A revision left pending-install,
// pending-upgrade or pending-rollback by a crash is marked failed first, so
// the upgrade can proceed from the last good state. The caller must hold the
// cluster's lock: a pending revision is only stale if nobody else is working.
//
// A chart kind the shared REST mapping does not know makes Helm fail before
// it writes anything; Deploy then refreshes discovery once and tries again
// (the CRD may have been installed since the mapping was read).
//
// Helm's install and upgrade cannot be cancelled once they write (given a
// context that ends, RunWithContext returns but leaves its writes going and
// marks the release failed although it then ends up deployed). So Deploy
// checks ctx before it starts and then runs Helm to its end: it returns when
// Helm has finished, which may be after ctx ended. Reads of the release
// history run to their end too; only Get's and Uninstall's end with ctx.
func (m *Manager) Deploy(ctx context.Context, t Target, name string, ch *chart.Chart, values map[string]any) (_ *Release, err error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("deploying release %s/%s: %w", t.Namespace, name, err)
	}
	ctx = context.WithoutCancel(ctx)
	operation := "upgrade"
	defer func(start time.Time) { m.observe(operation, start, &err) }(time.Now())
	rel, operation, err := m.deploy(ctx, t, name, ch, values, false)
	if kindNotFound(err) {
		m.log.Info("a chart kind is not in the cached API discovery; refreshing it", "release", name, "namespace", t.Namespace, "error", err)
		rel, operation, err = m.deploy(ctx, t, name, ch, values, true)
	}
	return rel, err
}

// deploy is one attempt of Deploy; refresh re-reads API discovery first.
// It says which operation it ran: install or upgrade.
func (m *Manager) deploy(ctx context.Context, t Target, name string, ch *chart.Chart, values map[string]any, refresh bool) (*Release, string, error) {
	cfg, err := m.config(t, ctx)
	if err != nil {
		return nil, "upgrade", err
	}
	if cfg.Capabilities, err = m.discovery.capabilities(t.Getter, refresh); err != nil {
		return nil, "upgrade", fmt.Errorf("asking the management cluster what it serves: %w", err)
	}
	last, err := latest(cfg, name)
	if err != nil && !errors.Is(err, driver.ErrReleaseNotFound) {
		return nil, "upgrade", err
	}
	if last == nil || last.Info.Status == helmrelease.StatusUninstalled {
		rel, err := m.install(ctx, cfg, t, name, ch, values)
		return rel, "install", err
	}
	if last.Info.Status.IsPending() {
		m.log.Warn("recovering a release left pending by an interrupted operation",
			"release", name, "namespace", t.Namespace, "revision", last.Version, "status", last.Info.Status.String())
		last.Info.Status = helmrelease.StatusFailed
		last.Info.Description = "interrupted " + last.Info.Description + "; marked failed by magnum-capi to recover"
		if err := cfg.Releases.Update(last); err != nil {
			return nil, "upgrade", fmt.Errorf("recovering pending release %s/%s: %w", t.Namespace, name, err)
		}
	}
	rel, err := m.upgrade(ctx, cfg, t, name, ch, values)
	return rel, "upgrade", err
}

// Both actions skip Helm's OpenAPI validation of the rendered objects
// (DisableOpenAPIValidation): to decide whether to validate on the client,
// it downloads and parses the OpenAPI v3 document of every API group the
// chart uses, for every action — 9 requests and, with the CAPI CRDs'
// schemas, nearly all of an upgrade's CPU — only to learn that the API
// server validates fields itself (every Kubernetes since 1.27), in which
// case Helm validates nothing on the client anyway.

func (m *Manager) install(ctx context.Context, cfg *action.Configuration, t Target, name string, ch *chart.Chart, values map[string]any) (*Release, error) {
	inst := action.NewInstall(cfg)
	inst.ReleaseName = name
	inst.Namespace = t.Namespace
	inst.Timeout = m.opts.Timeout
	inst.Labels = t.recordLabels()
	inst.PostRenderer = t.postRenderer()
	inst.DisableOpenAPIValidation = true
	rel, err := inst.RunWithContext(ctx, ch, values)
	if err != nil {
		return nil, fmt.Errorf("installing release %s/%s: %w", t.Namespace, name, err)
	}
	return fromHelm(rel), nil
}

func (m *Manager) upgrade(ctx context.Context, cfg *action.Configuration, t Target, name string, ch *chart.Chart, values map[string]any) (*Release, error) {
	up := action.NewUpgrade(cfg)
	up.Namespace = t.Namespace
	up.MaxHistory = m.opts.HistoryMax
	up.Timeout = m.opts.Timeout
	up.ResetValues = true
	up.Labels = t.recordLabels()
	up.PostRenderer = t.postRenderer()
	up.DisableOpenAPIValidation = true
	rel, err := up.RunWithContext(ctx, name, ch, values)
	if err != nil {
		return nil, fmt.Errorf("upgrading release %s/%s: %w", t.Namespace, name, err)
	}
	return fromHelm(rel), nil
}

// Uninstall removes the release; a release already gone is not an error.
func (m *Manager) Uninstall(ctx context.Context, t Target, name string) (err error) {
	defer m.observe("uninstall", time.Now(), &err)
	cfg, err := m.config(t, ctx)
	if err != nil {
		return err
	}
	un := action.NewUninstall(cfg)
	un.Timeout = m.opts.Timeout
	if _, err := un.Run(name); err != nil {
		if errors.Is(err, driver.ErrReleaseNotFound) {
			return nil
		}
		return fmt.Errorf("uninstalling release %s/%s: %w", t.Namespace, name, err)
	}
	return nil
}

// Get returns the newest revision of the release.
func (m *Manager) Get(ctx context.Context, t Target, name string) (_ *Release, err error) {
	defer m.observe("get", time.Now(), &err)
	cfg, err := m.config(t, ctx)
	if err != nil {
		return nil, err
	}
	last, err := latest(cfg, name)
	if errors.Is(err, driver.ErrReleaseNotFound) {
		return nil, &NotFoundError{Name: name, Namespace: t.Namespace}
	}
	if err != nil {
		return nil, err
	}
	return fromHelm(last), nil
}

func latest(cfg *action.Configuration, name string) (*helmrelease.Release, error) {
	revisions, err := cfg.Releases.History(name)
	if err != nil {
		return nil, err
	}
	if len(revisions) == 0 {
		return nil, driver.ErrReleaseNotFound
	}
	sort.Slice(revisions, func(i, j int) bool { return revisions[i].Version > revisions[j].Version })
	return revisions[0], nil
}

func fromHelm(r *helmrelease.Release) *Release {
	out := &Release{Name: r.Name, Namespace: r.Namespace, Revision: r.Version, Values: r.Config, Labels: r.Labels, manifest: r.Manifest}
	if r.Info != nil {
		out.Status = r.Info.Status.String()
		out.LastDeployed = r.Info.LastDeployed.Time
	}
	if r.Chart != nil && r.Chart.Metadata != nil {
		out.ChartName = r.Chart.Metadata.Name
		out.ChartVersion = r.Chart.Metadata.Version
	}
	return out
}
