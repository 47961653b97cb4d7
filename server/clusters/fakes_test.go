package clusters

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/magnum-capi/magnum-capi/certs"
	"github.com/magnum-capi/magnum-capi/certs/certstest"
	"github.com/magnum-capi/magnum-capi/helmvalues"
	"github.com/magnum-capi/magnum-capi/server/kube"
	"github.com/magnum-capi/magnum-capi/server/openstack"
	"github.com/magnum-capi/magnum-capi/server/release"
	"github.com/magnum-capi/magnum-capi/server/watchcache"
)

// Fakes of the domain's ports (port_*.go), for the unit tests of the
// operations: each holds its state in memory, records what it was asked to
// write, and fails a method named in its fail map with that error.

// failures is what a fake's methods fail with, by method name.
type failures map[string]error

// recorder keeps what a fake was asked to write, in order.
type recorder struct {
	mu     sync.Mutex
	writes []string
	fail   failures
}

func (r *recorder) record(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writes = append(r.writes, fmt.Sprintf(format, args...))
}

func (r *recorder) failure(method string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.fail[method]
}

// recorded is a copy of the writes so far.
func (r *recorder) recorded() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.writes)
}

// fakeKube is a management cluster: Secrets, namespaces and annotations in
// memory. Its Leases are kube's own on an in-memory client (a *kube.Lock
// cannot be made otherwise); lockErr refuses every Lease instead.
type fakeKube struct {
	recorder
	secrets map[string]*corev1.Secret // by namespace/name
	lockErr error
	leases  *kube.Cluster
}

var _ Kube = (*fakeKube)(nil)

func newFakeKube() *fakeKube {
	return &fakeKube{secrets: map[string]*corev1.Secret{}, leases: &kube.Cluster{Client: fake.NewClientBuilder().Build()}}
}

func (k *fakeKube) GetSecret(_ context.Context, ns, name string) (*corev1.Secret, error) {
	if err := k.failure("GetSecret"); err != nil {
		return nil, err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if s, ok := k.secrets[ns+"/"+name]; ok {
		return s.DeepCopy(), nil
	}
	return nil, nil
}

func (k *fakeKube) ApplySecret(_ context.Context, s *corev1.Secret) error {
	if err := k.failure("ApplySecret"); err != nil {
		return err
	}
	k.record("apply secret %s/%s", s.Namespace, s.Name)
	k.mu.Lock()
	defer k.mu.Unlock()
	k.secrets[s.Namespace+"/"+s.Name] = s.DeepCopy()
	return nil
}

func (k *fakeKube) DeleteSecret(_ context.Context, ns, name string) error {
	if err := k.failure("DeleteSecret"); err != nil {
		return err
	}
	k.record("delete secret %s/%s", ns, name)
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.secrets, ns+"/"+name)
	return nil
}

func (k *fakeKube) DeleteSecrets(_ context.Context, ns string, match map[string]string) (int, error) {
	if err := k.failure("DeleteSecrets"); err != nil {
		return 0, err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	n := 0
	for key, s := range k.secrets {
		if s.Namespace == ns && hasLabels(s.Labels, match) {
			delete(k.secrets, key)
			n++
		}
	}
	k.writes = append(k.writes, fmt.Sprintf("delete %d secrets in %s", n, ns))
	return n, nil
}

func (k *fakeKube) HasSecrets(_ context.Context, ns string, match map[string]string) (bool, error) {
	if err := k.failure("HasSecrets"); err != nil {
		return false, err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, s := range k.secrets {
		if s.Namespace == ns && hasLabels(s.Labels, match) {
			return true, nil
		}
	}
	return false, nil
}

func (k *fakeKube) SecretsWithLabel(_ context.Context, key string) ([]kube.SecretMeta, error) {
	if err := k.failure("SecretsWithLabel"); err != nil {
		return nil, err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []kube.SecretMeta
	for _, s := range k.secrets {
		if _, ok := s.Labels[key]; ok {
			out = append(out, kube.SecretMeta{Namespace: s.Namespace, Name: s.Name, Labels: s.Labels, Annotations: s.Annotations})
		}
	}
	return out, nil
}

func hasLabels(labels, match map[string]string) bool {
	for k, v := range match {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func (k *fakeKube) EnsureNamespace(_ context.Context, name string, _ map[string]string) error {
	if err := k.failure("EnsureNamespace"); err != nil {
		return err
	}
	k.record("ensure namespace %s", name)
	return nil
}

func (k *fakeKube) ForgetNamespace(string) {}

func (k *fakeKube) BindNamespace(_ context.Context, ns string) error {
	k.record("bind namespace %s", ns)
	return k.failure("BindNamespace")
}

func (k *fakeKube) AcquireLock(ctx context.Context, req kube.LockRequest, log *slog.Logger) (*kube.Lock, error) {
	if k.lockErr != nil {
		return nil, k.lockErr
	}
	return k.leases.AcquireLock(ctx, req, log)
}

func (k *fakeKube) AnnotateCluster(_ context.Context, ns, name, key, value string) error {
	if err := k.failure("AnnotateCluster"); err != nil {
		return err
	}
	k.record("annotate cluster %s/%s %s", ns, name, key)
	return nil
}

func (k *fakeKube) AnnotateMachine(_ context.Context, ns, name, key, value string) error {
	if err := k.failure("AnnotateMachine"); err != nil {
		return err
	}
	k.record("annotate machine %s/%s %s", ns, name, key)
	return nil
}

func (k *fakeKube) Leftovers(context.Context, string, string, string) ([]kube.Leftover, error) {
	return nil, k.failure("Leftovers")
}

func (k *fakeKube) WorkloadAccess(context.Context, string, string) (*kube.WorkloadAccess, error) {
	return nil, k.failure("WorkloadAccess")
}

func (k *fakeKube) HelmGetter(string) genericclioptions.RESTClientGetter { return nil }

// fakeReleases are Helm releases in memory. Deploy waits for the target's
// BeforeWrite, as Helm's first record write does, and writes nothing when
// it fails; it fails before that ("Deploy"), at the record's first write,
// BeforeWrite having passed ("DeployAtWrite"), or after it ("DeployAfterWrite").
type fakeReleases struct {
	recorder
	releases map[string]*release.Release // by namespace/name
	// targets are the Targets of the last deploy of each release.
	targets map[string]release.Target
}

var _ Releases = (*fakeReleases)(nil)

func (r *fakeReleases) Deploy(_ context.Context, t release.Target, name string, ch *chart.Chart, values map[string]any) (*release.Release, error) {
	if err := r.failure("Deploy"); err != nil {
		return nil, err
	}
	if t.BeforeWrite != nil {
		if err := t.BeforeWrite(); err != nil {
			return nil, err
		}
	}
	if err := r.failure("DeployAtWrite"); err != nil {
		return nil, err
	}
	r.record("deploy %s/%s %s", t.Namespace, name, ch.Metadata.Version)
	r.mu.Lock()
	rel := &release.Release{Name: name, Namespace: t.Namespace, Revision: 1, Status: "deployed",
		ChartName: ch.Metadata.Name, ChartVersion: ch.Metadata.Version, Values: values}
	// Helm keeps the record's labels of the last revision, merged with
	// the deploy's (Target.Labels and RecordLabels).
	rel.Labels = map[string]string{}
	if prev := r.releases[t.Namespace+"/"+name]; prev != nil {
		rel.Revision = prev.Revision + 1
		maps.Copy(rel.Labels, prev.Labels)
	}
	maps.Copy(rel.Labels, t.RecordLabels)
	maps.Copy(rel.Labels, t.Labels)
	r.releases[t.Namespace+"/"+name] = rel
	if r.targets == nil {
		r.targets = map[string]release.Target{}
	}
	r.targets[t.Namespace+"/"+name] = t
	r.mu.Unlock()
	if t.Wrote != nil {
		t.Wrote()
	}
	// Helm fails after it wrote the release record (a resource it then
	// creates is refused).
	if err := r.failure("DeployAfterWrite"); err != nil {
		return nil, err
	}
	return rel, nil
}

func (r *fakeReleases) Get(_ context.Context, t release.Target, name string) (*release.Release, error) {
	if err := r.failure("Get"); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if rel, ok := r.releases[t.Namespace+"/"+name]; ok {
		return rel, nil
	}
	return nil, &release.NotFoundError{Name: name, Namespace: t.Namespace}
}

func (r *fakeReleases) Uninstall(_ context.Context, t release.Target, name string) error {
	if err := r.failure("Uninstall"); err != nil {
		return err
	}
	r.record("uninstall %s/%s", t.Namespace, name)
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.releases, t.Namespace+"/"+name)
	return nil
}

// fakeCharts has every chart version, empty.
type fakeCharts struct{ fail error }

var _ Charts = (*fakeCharts)(nil)

func (c *fakeCharts) Load(_ context.Context, version string) (*chart.Chart, error) {
	if c.fail != nil {
		return nil, c.fail
	}
	return &chart.Chart{Metadata: &chart.Metadata{Name: "openstack-cluster", Version: version}}, nil
}

// fakeOpenStack is one project's Keystone and Nova: the facts every
// template resolves to, the application credentials and server groups.
type fakeOpenStack struct {
	recorder
	facts        openstack.Facts
	credentials  map[string]openstack.CredentialRef // by id
	serverGroups map[string]openstack.ServerGroup   // by name
	floatingIPs  map[string]openstack.FloatingIP    // the project's, by address
	made         int
}

var _ OpenStack = (*fakeOpenStack)(nil)

func newFakeOpenStack() *fakeOpenStack {
	return &fakeOpenStack{
		facts: openstack.Facts{
			Image:             helmvalues.Image{ID: "3f1c2b4a-5d6e-4f70-8192-a3b4c5d6e7f8", OSDistro: "ubuntu", KubeVersion: "v1.30.4"},
			VolumeTypes:       []helmvalues.VolumeType{{ID: "c1d2e3f4-0000-4000-8000-000000000001", Name: "__DEFAULT__", IsPublic: true}},
			ExternalNetworkID: "6e8f2a10-4b3c-4d5e-8f60-718293a4b5c6",
		},
		credentials: map[string]openstack.CredentialRef{}, serverGroups: map[string]openstack.ServerGroup{},
	}
}

func (o *fakeOpenStack) FindFloatingIP(_ context.Context, _ openstack.Caller, address string) (openstack.FloatingIP, bool, error) {
	if err := o.failure("FindFloatingIP"); err != nil {
		return openstack.FloatingIP{}, false, err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	fip, ok := o.floatingIPs[address]
	return fip, ok, nil
}

func (o *fakeOpenStack) Facts(context.Context, openstack.Caller, openstack.Objects) (openstack.Facts, error) {
	return o.facts, o.failure("Facts")
}

func (o *fakeOpenStack) CreateCredential(_ context.Context, _ openstack.Caller, cluster helmvalues.Cluster) (openstack.Credential, error) {
	if err := o.failure("CreateCredential"); err != nil {
		return openstack.Credential{}, err
	}
	o.mu.Lock()
	o.made++
	ref := openstack.CredentialRef{ID: fmt.Sprintf("cred-%d", o.made), Name: "magnum-" + cluster.UUID + fmt.Sprintf("-%d", o.made)}
	o.credentials[ref.ID] = ref
	o.mu.Unlock()
	o.record("create credential %s", ref.ID)
	return openstack.Credential{ID: ref.ID, Name: ref.Name, CloudsYAML: []byte("application_credential_id: " + ref.ID)}, nil
}

func (o *fakeOpenStack) DeleteCredential(_ context.Context, _ helmvalues.Cluster, id string) error {
	return o.deleteCredential(id, "DeleteCredential")
}

func (o *fakeOpenStack) deleteCredential(id, method string) error {
	if err := o.failure(method); err != nil {
		return err
	}
	o.record("delete credential %s", id)
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.credentials, id)
	return nil
}

func (o *fakeOpenStack) CredentialIDFromClouds(cloudsYAML []byte) (string, error) {
	id, ok := strings.CutPrefix(string(cloudsYAML), "application_credential_id: ")
	if !ok {
		return "", errors.New("no application credential in clouds.yaml")
	}
	return id, nil
}

func (o *fakeOpenStack) CallerCredentials(context.Context, openstack.Caller, helmvalues.Cluster) ([]openstack.CredentialRef, error) {
	return o.listCredentials("CallerCredentials")
}

func (o *fakeOpenStack) DeleteCallerCredential(_ context.Context, _ openstack.Caller, _ helmvalues.Cluster, ref openstack.CredentialRef) error {
	return o.deleteCredential(ref.ID, "DeleteCallerCredential")
}

func (o *fakeOpenStack) ClusterCredentials(context.Context, helmvalues.Cluster) ([]openstack.CredentialRef, error) {
	return o.listCredentials("ClusterCredentials")
}

func (o *fakeOpenStack) listCredentials(method string) ([]openstack.CredentialRef, error) {
	if err := o.failure(method); err != nil {
		return nil, err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Collect(maps.Values(o.credentials)), nil
}

func (o *fakeOpenStack) EnsureServerGroups(_ context.Context, _ openstack.Caller, policy string, names []string) (map[string]openstack.ServerGroup, error) {
	if err := o.failure("EnsureServerGroups"); err != nil {
		return nil, err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	out := map[string]openstack.ServerGroup{}
	for _, name := range names {
		if _, ok := o.serverGroups[name]; !ok {
			o.serverGroups[name] = openstack.ServerGroup{ID: "sg-" + name, Name: name, Policy: policy}
			o.writes = append(o.writes, "create server group "+name)
		}
		out[name] = o.serverGroups[name]
	}
	return out, nil
}

func (o *fakeOpenStack) DeleteServerGroups(_ context.Context, _ openstack.Caller, names []string) (int, error) {
	if err := o.failure("DeleteServerGroups"); err != nil {
		return 0, err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	n := 0
	for _, name := range names {
		if _, ok := o.serverGroups[name]; ok {
			delete(o.serverGroups, name)
			o.writes = append(o.writes, "delete server group "+name)
			n++
		}
	}
	return n, nil
}

// fakeCache is a watch cache holding objs for every cluster.
type fakeCache struct {
	objs watchcache.Objects
	err  error
}

var _ WatchCache = (*fakeCache)(nil)

func (c *fakeCache) Objects(context.Context, string, string) (*watchcache.Objects, error) {
	if c.err != nil {
		return nil, c.err
	}
	objs := c.objs
	return &objs, nil
}

func (c *fakeCache) TakeBarrier(context.Context, string, string) (*watchcache.Barrier, error) {
	return &watchcache.Barrier{}, nil
}

func (c *fakeCache) Behind(*watchcache.Barrier) string { return "" }

// OnDelete and OnChange tell f nothing: the fake sees no object change.
func (c *fakeCache) OnDelete(func(ns, stackID string)) {}

func (c *fakeCache) OnChange(func(ns, stackID string)) {}

// bed is a Service on fakes of all its ports.
type bed struct {
	s         *Service
	kube      *fakeKube
	releases  *fakeReleases
	charts    *fakeCharts
	openstack *fakeOpenStack
	cache     *fakeCache
}

func newBed(t *testing.T) *bed {
	t.Helper()
	b := &bed{kube: newFakeKube(), releases: &fakeReleases{releases: map[string]*release.Release{}}, charts: &fakeCharts{},
		openstack: newFakeOpenStack(), cache: &fakeCache{}}
	s, err := New(Config{Holder: "test", Values: helmvalues.DefaultConfig()}, Deps{
		ManagementClusters: []*ManagementCluster{{Name: "default", Kube: b.kube, Cache: b.cache}},
		Releases:           b.releases, Charts: b.charts, OpenStack: b.openstack, Log: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	b.s = s
	return b
}

// writes is everything the fakes were asked to write, port by port.
func (b *bed) writes() []string {
	var all []string
	for _, r := range []*recorder{&b.kube.recorder, &b.releases.recorder, &b.openstack.recorder} {
		all = append(all, r.recorded()...)
	}
	return all
}

// deployed installs the cluster's release as a create would have, so an
// operation on an existing cluster finds it.
func (b *bed) deployed(t *testing.T, spec Spec) {
	t.Helper()
	ctx := context.Background()
	if _, err := b.s.Create(ctx, projectCaller, spec, testAuthorities(t)); err != nil {
		t.Fatalf("creating the cluster first: %v", err)
	}
	for _, r := range []*recorder{&b.kube.recorder, &b.releases.recorder, &b.openstack.recorder} {
		r.mu.Lock()
		r.writes = nil
		r.mu.Unlock()
	}
}

// projectCaller is a user of testSpec's project; adminCaller a cloud admin
// of another project.
var (
	projectCaller = Caller{AuthToken: "token", AuthURL: "https://keystone.example/v3", UserID: "0f1e2d3c4b5a69788796a5b4c3d2e1f0",
		ProjectID: "9e4a5c1f2b3d4e5f6a7b8c9d0e1f2a3b", RequestID: "req-1"}
	adminCaller = Caller{AuthToken: "admin-token", AuthURL: "https://keystone.example/v3", UserID: "admin",
		ProjectID: "admin-project", RequestID: "req-2", IsAdmin: true}
)

// testNamespace and testStackID are testSpec's namespace and release.
const (
	testNamespace = "magnum-9e4a5c1f2b3d4e5f6a7b8c9d0e1f2a3b"
	testStackID   = "demo-fadimafqmhb2"
)

// testSpec is a cluster of one control plane machine and two workers that
// has not been created yet (no stack_id).
func testSpec() Spec {
	return Spec{
		Cluster: helmvalues.Cluster{UUID: "a6b3c1e2-7d54-4a0e-9f1c-3b2d4e5f6a7b", Name: "demo",
			ProjectID: "9e4a5c1f2b3d4e5f6a7b8c9d0e1f2a3b", UserID: "0f1e2d3c4b5a69788796a5b4c3d2e1f0",
			Keypair: "mykey", MasterFlavorID: "m1.medium", FlavorID: "m1.medium"},
		Template: helmvalues.ClusterTemplate{UUID: "5d12f6fd-a196-4bf0-ae4c-1f639a523a52", Name: "k8s-1.30",
			COE: "kubernetes", ImageID: "ubuntu-2204-kube-v1.30.4", FlavorID: "m1.medium", MasterFlavorID: "m1.medium",
			DNSNameserver: "8.8.8.8", ExternalNetworkID: "public", NetworkDriver: "calico", ClusterDistro: "ubuntu"},
		NodeGroups: []helmvalues.NodeGroup{
			{UUID: "11111111-1111-4111-8111-111111111111", Name: "default-master", Role: "master", FlavorID: "m1.medium", NodeCount: 1, IsDefault: true},
			{UUID: "22222222-2222-4222-8222-222222222222", Name: "default-worker", Role: "worker", FlavorID: "m1.medium", NodeCount: 2, IsDefault: true},
		},
	}
}

// createdSpec is testSpec after its create: Magnum has stored the stack_id.
func createdSpec() Spec {
	spec := testSpec()
	spec.Cluster.StackID = stackID(spec)
	return spec
}

var authorities = sync.OnceValues(func() (certs.Authorities, error) {
	a, _, err := certstest.Authorities("demo")
	return a, err
})

// testAuthorities is valid CA material, made once per test binary.
func testAuthorities(t *testing.T) certs.Authorities {
	t.Helper()
	a, err := authorities()
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// class is the gRPC code server/errors.go would give err, by the same
// methods in the same order ("" for none of them).
func class(err error) string {
	var (
		ia interface{ InvalidArgument() bool }
		fp interface{ FailedPrecondition() bool }
		nf interface{ NotFound() bool }
		un interface{ Unavailable() bool }
		ab interface{ Aborted() bool }
	)
	switch {
	case err == nil:
		return "OK"
	case errors.As(err, &ia) && ia.InvalidArgument():
		return "InvalidArgument"
	case errors.As(err, &fp) && fp.FailedPrecondition():
		return "FailedPrecondition"
	case errors.As(err, &nf) && nf.NotFound():
		return "NotFound"
	case errors.As(err, &un) && un.Unavailable():
		return "Unavailable"
	case errors.As(err, &ab) && ab.Aborted():
		return "Aborted"
	}
	return ""
}

// madeServerGroup is a server group an earlier operation made.
func madeServerGroup(name string) openstack.ServerGroup {
	return openstack.ServerGroup{ID: "sg-" + name, Name: name, Policy: helmvalues.DefaultServerGroupPolicy}
}

// leaseHeld makes another operation hold the cluster's Lease past the
// caller's deadline.
func (b *bed) leaseHeld() {
	b.kube.lockErr = &kube.LockedError{Lease: kube.LeasePrefix + testStackID, Holder: "sidecar-b/1", Since: time.Now(), Err: context.DeadlineExceeded}
}
