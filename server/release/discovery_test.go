package release

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/magnum-capi/magnum-capi/server/kube"
	"github.com/magnum-capi/magnum-capi/test/testbed"
)

// testDiscoveryShared: installs and upgrades on one management cluster
// share one API discovery: after the first, none asks the API server what
// it serves or fetches an OpenAPI schema. A chart kind whose CRD appears
// after that (the cached mapping does not know it) is found by refreshing
// discovery once, not after the cache's TTL. Run by TestManagerOnTestbed on
// its test bed.
func testDiscoveryShared(t *testing.T, env *testbed.Env) {
	counter := &discoveryCounter{}
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(counter.wrap)
	kc, err := kube.Connect("discovery", cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	const ns = "release-discovery"
	if err := kc.EnsureNamespace(ctx, ns, nil); err != nil {
		t.Fatal(err)
	}
	m := NewManager(Options{HistoryMax: 3}, quiet())
	target := Target{Getter: kc.HelmGetter(ns), Namespace: ns}
	plain := widgetChart(false)
	if _, err := m.Deploy(ctx, target, "first", plain, map[string]any{"size": 1}); err != nil {
		t.Fatalf("first install: %v", err)
	}
	if got := counter.take(); len(got) == 0 {
		t.Fatal("the first install asked no discovery: the counter is not on the connection")
	}
	for i, name := range []string{"first", "second", "first"} {
		if _, err := m.Deploy(ctx, target, name, plain, map[string]any{"size": i + 2}); err != nil {
			t.Fatalf("deploy %d of %s: %v", i, name, err)
		}
	}
	if got := counter.take(); len(got) != 0 {
		t.Errorf("installs and upgrades after the first asked discovery or OpenAPI again:\n%s", strings.Join(got, "\n"))
	}

	// The chart now renders a Widget, whose CRD does not exist yet: refused
	// (after one refresh), nothing changed.
	widget := widgetChart(true)
	if _, err := m.Deploy(ctx, target, "first", widget, map[string]any{"size": 5}); err == nil || !kindNotFound(err) {
		t.Fatalf("deploy of a kind the API server does not serve: %v, want no match for the kind", err)
	}
	if rel, err := m.Get(ctx, target, "first"); err != nil || rel.Revision != 3 || rel.Status != "deployed" {
		t.Fatalf("after the refused upgrade: %+v %v, want revision 3 deployed", rel, err)
	}
	installWidgetCRD(t, env)
	counter.take()
	rel, err := m.Deploy(ctx, target, "first", widget, map[string]any{"size": 6})
	if err != nil {
		t.Fatalf("deploy once the CRD exists: %v", err)
	}
	if rel.Revision != 4 || rel.Status != "deployed" {
		t.Errorf("deploy once the CRD exists gave revision %d %s, want 4 deployed", rel.Revision, rel.Status)
	}
	if got := counter.take(); len(got) == 0 {
		t.Error("the Widget was mapped without refreshing discovery: was the mapping not cached?")
	}
}

// widgetChart renders a ConfigMap, and a Widget (example.magnum-capi.test/v1)
// when withWidget.
func widgetChart(withWidget bool) *chart.Chart {
	ch := &chart.Chart{
		Metadata: &chart.Metadata{APIVersion: chart.APIVersionV2, Name: "widget", Version: "0.1.0"},
		Templates: []*chart.File{{Name: "templates/config.yaml", Data: []byte(
			"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  size: {{ .Values.size | quote }}\n")}},
	}
	if withWidget {
		ch.Templates = append(ch.Templates, &chart.File{Name: "templates/widget.yaml", Data: []byte(
			"apiVersion: example.magnum-capi.test/v1\nkind: Widget\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  size: {{ .Values.size }}\n")})
	}
	return ch
}

// installWidgetCRD creates the Widget CRD and waits until it is served.
func installWidgetCRD(t *testing.T, env *testbed.Env) {
	t.Helper()
	preserve := true
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.magnum-capi.test"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.magnum-capi.test",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: &preserve,
				}},
			}},
		},
	}
	ctx := context.Background()
	if err := env.Client.Create(ctx, crd); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		var got apiextensionsv1.CustomResourceDefinition
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(crd), &got); err != nil {
			t.Fatal(err)
		}
		for _, c := range got.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the Widget CRD was not established within a minute")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// discoveryCounter records the discovery and OpenAPI requests a
// connection sends: GET /api, /apis, /api/v1, /apis/<g>/<v>, /openapi/...
// Not GET /version: Helm's reachability check asks it once per action, a
// few bytes (the version discovery reads is counted through /api and /apis,
// asked together).
type discoveryCounter struct {
	mu   sync.Mutex
	seen []string
}

func (c *discoveryCounter) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		if isDiscovery(req.URL.Path) {
			c.mu.Lock()
			c.seen = append(c.seen, req.Method+" "+req.URL.Path)
			c.mu.Unlock()
		}
		return next.RoundTrip(req)
	})
}

// take returns what was seen since the last take.
func (c *discoveryCounter) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	seen := c.seen
	c.seen = nil
	return seen
}

func isDiscovery(path string) bool {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	switch segs[0] {
	case "openapi":
		return true
	case "api":
		return len(segs) <= 2
	case "apis":
		return len(segs) <= 3
	}
	return false
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
