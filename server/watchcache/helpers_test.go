package watchcache

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"text/template"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/magnum-capi/magnum-capi/server/kube"
	"github.com/magnum-capi/magnum-capi/test/testbed"
)

var env *testbed.Env

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
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
	return m.Run()
}

var quiet = slog.New(slog.DiscardHandler)

// newNamespace creates a namespace named after the test.
func newNamespace(t testing.TB) string {
	t.Helper()
	name := strings.ToLower(strings.NewReplacer("/", "-", "_", "-", " ", "-").Replace(t.Name()))
	if len(name) > 40 {
		name = name[:40]
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: strings.Trim(name, "-") + "-"}}
	if err := env.Client.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// startCache connects to the test bed through wrap (nil: directly) and
// starts a watch cache, stopped when the test ends.
func startCache(t testing.TB, wrap func(http.RoundTripper) http.RoundTripper) *Cache {
	t.Helper()
	cfg := rest.CopyConfig(env.Config)
	if wrap != nil {
		cfg.Wrap(wrap)
	}
	c, err := kube.Connect("test", cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ch, err := New(c, quiet)
	if err != nil {
		t.Fatal(err)
	}
	ch.Start(ctx)
	return ch
}

// synced waits for the cache's first sync.
func synced(t testing.TB, ch *Cache) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := ch.WaitForSync(ctx); err != nil {
		t.Fatal(err)
	}
}

// eventually polls cond every 20 ms for up to 30 s.
func eventually(t testing.TB, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	last := ""
	for time.Now().Before(deadline) {
		ok, state := cond()
		if ok {
			return
		}
		last = state
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s: not reached after 30s; last: %s", what, last)
}

// clusterObjects is one release's worth of objects as the chart and the
// controllers leave them, at the versions the management cluster stores.
// {{.Machines}} worker Machines; every object carries the chart's label.
const clusterObjects = `
apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata:
  name: {{.Name}}
  labels: {capi.stackhpc.com/cluster: {{.Name}}}
spec:
  controlPlaneEndpoint: {host: 203.0.113.10, port: 6443}
  controlPlaneRef: {apiGroup: controlplane.cluster.x-k8s.io, kind: KubeadmControlPlane, name: {{.Name}}-control-plane}
  infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: OpenStackCluster, name: {{.Name}}}
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: OpenStackCluster
metadata:
  name: {{.Name}}
  labels: {capi.stackhpc.com/cluster: {{.Name}}}
spec:
  identityRef: {cloudName: openstack, name: {{.Name}}-cloud-credentials}
---
apiVersion: controlplane.cluster.x-k8s.io/v1beta2
kind: KubeadmControlPlane
metadata:
  name: {{.Name}}-control-plane
  labels: {capi.stackhpc.com/cluster: {{.Name}}, capi.stackhpc.com/component: control-plane}
spec:
  replicas: 3
  version: v1.33.2
  machineTemplate:
    spec:
      infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: OpenStackMachineTemplate, name: {{.Name}}-control-plane-1}
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDeployment
metadata:
  name: {{.Name}}-default-worker
  labels: {capi.stackhpc.com/cluster: {{.Name}}, capi.stackhpc.com/node-group: default-worker}
spec:
  clusterName: {{.Name}}
  replicas: {{.Machines}}
  selector:
    matchLabels: {capi.stackhpc.com/cluster: {{.Name}}, capi.stackhpc.com/node-group: default-worker}
  template:
    metadata:
      labels: {capi.stackhpc.com/cluster: {{.Name}}, capi.stackhpc.com/node-group: default-worker}
    spec:
      clusterName: {{.Name}}
      bootstrap: {configRef: {apiGroup: bootstrap.cluster.x-k8s.io, kind: KubeadmConfigTemplate, name: {{.Name}}-default-worker-1}}
      infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: OpenStackMachineTemplate, name: {{.Name}}-default-worker-1}
{{- range .MachineNames}}
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: Machine
metadata:
  name: {{.}}
  labels: {capi.stackhpc.com/cluster: {{$.Name}}, capi.stackhpc.com/node-group: default-worker, cluster.x-k8s.io/cluster-name: {{$.Name}}}
spec:
  clusterName: {{$.Name}}
  bootstrap: {dataSecretName: {{.}}-bootstrap}
  infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: OpenStackMachine, name: {{.}}}
  version: v1.33.2
{{- end}}
{{- range .Addons}}
---
apiVersion: addons.stackhpc.com/v1alpha1
kind: HelmRelease
metadata:
  name: {{$.Name}}-{{.}}
  labels: {capi.stackhpc.com/cluster: {{$.Name}}, capi.stackhpc.com/component: {{.}}}
spec:
  clusterName: {{$.Name}}
  releaseName: {{.}}
  targetNamespace: kube-system
  chart: {name: {{.}}, repo: https://charts.example.test, version: 1.0.0}
{{- end}}
---
apiVersion: addons.stackhpc.com/v1alpha1
kind: Manifests
metadata:
  name: {{.Name}}-cloud-config
  labels: {capi.stackhpc.com/cluster: {{.Name}}, capi.stackhpc.com/component: cloud-config}
spec:
  clusterName: {{.Name}}
  releaseName: cloud-config
  targetNamespace: kube-system
{{- range .HelmRecords}}
---
apiVersion: v1
kind: Secret
metadata:
  name: sh.helm.release.v1.{{$.Name}}.v{{.Version}}
  labels: {owner: helm, name: {{$.Name}}, status: {{.Status}}, version: "{{.Version}}", createdAt: "{{.CreatedAt}}"}
type: helm.sh/release.v1
data: {release: c2VjcmV0IHJlbGVhc2UgcGF5bG9hZA==}
{{- end}}
`

// helmRecord is one revision of the cluster's Helm release history (a
// Secret of Helm's storage driver).
type helmRecord struct {
	Version   int
	Status    string
	CreatedAt int64
}

// HelmRecords is the release history every fake cluster has: revision 1
// superseded an hour before the deployed revision 2.
func (fakeCluster) HelmRecords() []helmRecord {
	return []helmRecord{{1, "superseded", 1782900000}, {2, "deployed", 1782903600}}
}

// fakeCluster is the input of clusterObjects.
type fakeCluster struct {
	Name     string
	Machines int
	Addons   []string
}

func (f fakeCluster) MachineNames() []string {
	var out []string
	for i := range f.Machines {
		out = append(out, fmt.Sprintf("%s-default-worker-%02d", f.Name, i))
	}
	return out
}

// create writes the cluster's objects into ns, with a status on every
// Machine so that objects have their real size.
func (f fakeCluster) create(t testing.TB, ns string) []*unstructured.Unstructured {
	t.Helper()
	if f.Addons == nil {
		f.Addons = []string{"cni-calico", "ccm-openstack", "csi-cinder", "metrics-server", "monitoring"}
	}
	var buf strings.Builder
	if err := template.Must(template.New("objects").Parse(clusterObjects)).Execute(&buf, f); err != nil {
		t.Fatal(err)
	}
	var out []*unstructured.Unstructured
	for _, doc := range strings.Split(buf.String(), "\n---\n") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatalf("%v\n%s", err, doc)
		}
		if len(u.Object) == 0 {
			continue
		}
		u.SetNamespace(ns)
		if err := env.Client.Create(context.Background(), u); err != nil {
			t.Fatalf("creating %s %s: %v", u.GetKind(), u.GetName(), err)
		}
		if u.GetKind() == "Machine" {
			setMachineStatus(t, u)
		}
		out = append(out, u)
	}
	return out
}

// setMachineStatus gives a Machine the status CAPI would: addresses and the
// usual conditions.
func setMachineStatus(t testing.TB, u *unstructured.Unstructured) {
	t.Helper()
	now := time.Now().UTC().Format(time.RFC3339)
	var conds []any
	for _, c := range []string{"Available", "Ready", "UpToDate", "BootstrapConfigReady", "InfrastructureReady", "NodeReady", "NodeHealthy", "Deleting", "Paused"} {
		conds = append(conds, map[string]any{"type": c, "status": "True", "reason": c, "message": "", "lastTransitionTime": now, "observedGeneration": int64(1)})
	}
	status := map[string]any{
		"phase":              "Running",
		"observedGeneration": int64(1),
		"addresses": []any{
			map[string]any{"type": "InternalIP", "address": "10.0.0.10"},
			map[string]any{"type": "ExternalIP", "address": "203.0.113.50"},
			map[string]any{"type": "InternalDNS", "address": u.GetName()},
		},
		"conditions":     conds,
		"nodeRef":        map[string]any{"name": u.GetName()},
		"initialization": map[string]any{"bootstrapDataSecretCreated": true, "infrastructureProvisioned": true},
	}
	if err := unstructured.SetNestedField(u.Object, status, "status"); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Status().Update(context.Background(), u); err != nil {
		t.Fatalf("status of Machine %s: %v", u.GetName(), err)
	}
}

// setAddonPhase writes an addon's status as the addon provider does.
func setAddonPhase(t testing.TB, ns, name, phase, message string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(HelmReleaseGVK)
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
		t.Fatal(err)
	}
	status := map[string]any{"phase": phase}
	if message != "" {
		status["failureMessage"] = message
	}
	_ = unstructured.SetNestedField(u.Object, status, "status")
	if err := env.Client.Status().Update(context.Background(), u); err != nil {
		t.Fatalf("status of HelmRelease %s: %v", name, err)
	}
	return u
}

// gate holds requests (or watch events) while closed.
type gate struct {
	mu   sync.Mutex
	open chan struct{}
}

func newGate(open bool) *gate {
	g := &gate{open: make(chan struct{})}
	if open {
		close(g.open)
	}
	return g
}

func (g *gate) wait(ctx context.Context) error {
	g.mu.Lock()
	ch := g.open
	g.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g *gate) Open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.open:
	default:
		close(g.open)
	}
}

func (g *gate) Close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.open:
		g.open = make(chan struct{})
	default:
	}
}

func isWatch(req *http.Request) bool { return req.URL.Query().Get("watch") == "true" }

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// isDiscovery: /api, /api/v1, /apis, /apis/<group>/<version>.
func isDiscovery(req *http.Request) bool {
	segs := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	return (segs[0] == "api" && len(segs) <= 2) || (segs[0] == "apis" && len(segs) <= 3)
}

// holdReads makes reads of objects (lists and watches, not discovery) wait
// for g. Informers list through a watch (client-go's streaming list), so
// holding lists alone would not hold the first sync.
func holdReads(g *gate) func(http.RoundTripper) http.RoundTripper {
	return func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			if req.Method == http.MethodGet && !isDiscovery(req) {
				if err := g.wait(req.Context()); err != nil {
					return nil, err
				}
			}
			return next.RoundTrip(req)
		})
	}
}

// holdWatchEvents delays every chunk a watch stream delivers until g is
// open: data read while the gate is closed is handed over only once it
// opens, so no event slips through.
func holdWatchEvents(g *gate) func(http.RoundTripper) http.RoundTripper {
	return func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			resp, err := next.RoundTrip(req)
			if err == nil && isWatch(req) {
				resp.Body = &heldBody{ReadCloser: resp.Body, gate: g, done: req.Context().Done()}
			}
			return resp, err
		})
	}
}

type heldBody struct {
	io.ReadCloser
	gate *gate
	// done is the request's context's: a cancelled watch stops waiting.
	done <-chan struct{}
}

func (b *heldBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.gate.mu.Lock()
	open := b.gate.open
	b.gate.mu.Unlock()
	select {
	case <-open:
	case <-b.done:
	}
	return n, err
}
