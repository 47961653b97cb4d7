package release

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path"
	"strings"
	"sync"
	"testing"
	"time"

	helmkube "helm.sh/helm/v3/pkg/kube"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/magnum-capi/magnum-capi/server/kube"
	"github.com/magnum-capi/magnum-capi/test/testbed"
	"github.com/magnum-capi/magnum-capi/test/testchart"
)

// objectReads watches one connection's requests: the reads of single
// objects sent before the first write (Helm's conflict check), how many
// times each went to the API server and how many were in flight at once.
// Each read is held for readDelay so that reads sent together overlap
// however the machine schedules them.
type objectReads struct {
	mu               sync.Mutex
	sent             map[string]int
	inFlight, peak   int
	wrote, recording bool
}

const readDelay = 20 * time.Millisecond

func (o *objectReads) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		o.mu.Lock()
		// A read of one object: a GET with a name, not a list (the
		// release records are listed by label) nor /version.
		read := o.recording && !o.wrote && r.Method == http.MethodGet && !r.URL.Query().Has("labelSelector") && strings.Count(r.URL.Path, "/") >= 5
		if r.Method != http.MethodGet && o.recording {
			o.wrote = true
		}
		if read {
			o.sent[r.URL.Path]++
			o.inFlight++
			o.peak = max(o.peak, o.inFlight)
		}
		o.mu.Unlock()
		if read {
			time.Sleep(readDelay)
			defer func() { o.mu.Lock(); o.inFlight--; o.mu.Unlock() }()
		}
		return next.RoundTrip(r)
	})
}

// start forgets what was seen and watches the next action.
func (o *objectReads) start() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.sent, o.inFlight, o.peak, o.wrote, o.recording = map[string]int{}, 0, 0, false, true
}

// testReadAhead: an install's conflict check reads every object once, all
// at once (Helm alone reads them one by one: the baseline shows the test
// sees the difference), and still refuses an object someone else owns —
// writing nothing — and adopts one that the release owns.
func testReadAhead(t *testing.T, env *testbed.Env, values map[string]any) {
	ctx := t.Context()
	reads := &objectReads{}
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(reads.wrap)
	kc, err := kube.Connect("read-ahead", cfg)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := testchart.Load()
	if err != nil {
		t.Fatal(err)
	}
	objects, err := testchart.Render(ch, "demo", "read-ahead-0", values)
	if err != nil {
		t.Fatal(err)
	}
	helmAlone := NewManager(Options{}, quiet())
	helmAlone.sequentialWrites = true
	managers := []struct {
		name     string
		m        *Manager
		together bool
	}{
		{"reads ahead", NewManager(Options{}, quiet()), true},
		{"Helm alone", helmAlone, false},
	}
	for i, mg := range managers {
		t.Run(mg.name, func(t *testing.T) {
			ns := "read-ahead-" + string(rune('0'+i))
			if err := kc.EnsureNamespace(ctx, ns, nil); err != nil {
				t.Fatal(err)
			}
			target := Target{Getter: kc.HelmGetter(ns), Namespace: ns}
			ch, err := testchart.Load()
			if err != nil {
				t.Fatal(err)
			}
			reads.start()
			if _, err := mg.m.Deploy(ctx, target, "demo", ch, values); err != nil {
				t.Fatal(err)
			}
			reads.mu.Lock()
			sent, peak := reads.sent, reads.peak
			reads.recording = false
			reads.mu.Unlock()
			if len(sent) != len(objects) {
				t.Errorf("%d objects read before the first write, want the chart's %d: %v", len(sent), len(objects), sent)
			}
			for path, n := range sent {
				if n != 1 {
					t.Errorf("%s read %d times before the first write, want once", path, n)
				}
			}
			if together := peak > 1; together != mg.together {
				t.Errorf("at most %d reads in flight at once; want them together: %v", peak, mg.together)
			}
			if err := mg.m.Uninstall(ctx, target, "demo"); err != nil {
				t.Fatal(err)
			}
		})
	}

	m := managers[0].m
	owned := func(release, ns string) map[string]string {
		return map[string]string{"meta.helm.sh/release-name": release, "meta.helm.sh/release-namespace": ns}
	}
	tests := []struct {
		name        string
		annotations func(ns string) map[string]string
		// refused is what the install's error says; "" when it succeeds.
		refused string
	}{
		{"someone else's object is refused", func(ns string) map[string]string { return owned("other", ns) },
			`Secret "demo-cloud-credentials" in namespace "read-ahead-2" exists and cannot be imported into the current release`},
		{"the release's own object is adopted", func(ns string) map[string]string { return owned("demo", ns) }, ""},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := "read-ahead-" + string(rune('2'+i))
			if err := kc.EnsureNamespace(ctx, ns, nil); err != nil {
				t.Fatal(err)
			}
			there := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "demo-cloud-credentials", Namespace: ns,
				Labels: map[string]string{"app.kubernetes.io/managed-by": "Helm"}, Annotations: tt.annotations(ns)}}
			if err := env.Client.Create(ctx, there); err != nil {
				t.Fatal(err)
			}
			target := Target{Getter: kc.HelmGetter(ns), Namespace: ns}
			ch, err := testchart.Load()
			if err != nil {
				t.Fatal(err)
			}
			_, err = m.Deploy(ctx, target, "demo", ch, values)
			var records corev1.SecretList
			if err := env.Client.List(ctx, &records, client.InNamespace(ns), client.MatchingLabels{"owner": "helm"}); err != nil {
				t.Fatal(err)
			}
			if tt.refused != "" {
				if err == nil || !strings.Contains(err.Error(), tt.refused) {
					t.Fatalf("install over someone else's Secret: %v, want %q", err, tt.refused)
				}
				if n := len(records.Items); n != 0 {
					t.Errorf("%d release records written after the conflict, want none", n)
				}
				return
			}
			if err != nil {
				t.Fatalf("install adopting the release's own Secret: %v", err)
			}
			if len(records.Items) != 1 {
				t.Errorf("%d release records, want 1", len(records.Items))
			}
			if err := m.Uninstall(ctx, target, "demo"); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestReadAheadAnswers: an answer read ahead is given once, and none after
// the action writes through one of the objects' clients; reads then go to
// the API server (a stand-in that counts them).
func TestReadAheadAnswers(t *testing.T) {
	tests := []struct {
		name string
		// then runs after the reads are sent ahead, with the objects'
		// helpers.
		then func(t *testing.T, a, b *resource.Helper)
		// want is how many GETs of a and of b reached the server.
		want [2]int
	}{
		{"each answer once", func(t *testing.T, a, b *resource.Helper) {
			get(t, a, "a", false)
			get(t, b, "b", true)
			get(t, a, "a", false)
		}, [2]int{2, 1}},
		{"none after a write", func(t *testing.T, a, b *resource.Helper) {
			if _, err := b.Create("ns", false, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}); err != nil {
				t.Fatal(err)
			}
			get(t, a, "a", false)
			get(t, b, "b", true)
		}, [2]int{2, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			gets := map[string]int{}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				name := path.Base(r.URL.Path)
				w.Header().Set("Content-Type", "application/json")
				if r.Method != http.MethodGet {
					w.WriteHeader(http.StatusCreated)
					_, _ = io.WriteString(w, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"ns"}}`)
					return
				}
				mu.Lock()
				gets[name]++
				mu.Unlock()
				if name == "b" {
					w.WriteHeader(http.StatusNotFound)
					_, _ = io.WriteString(w, `{"apiVersion":"v1","kind":"Status","status":"Failure","reason":"NotFound","code":404}`)
					return
				}
				_, _ = io.WriteString(w, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"ns"}}`)
			}))
			defer srv.Close()
			mapping := &meta.RESTMapping{Resource: corev1.SchemeGroupVersion.WithResource("configmaps"),
				GroupVersionKind: corev1.SchemeGroupVersion.WithKind("ConfigMap"), Scope: meta.RESTScopeNamespace}
			var list helmkube.ResourceList
			for _, name := range []string{"a", "b"} {
				// Each object has a client of its own, as Helm's Build gives
				// (with a timeout: without one, client-go hands out
				// http.DefaultClient, whose transport is not wrapped).
				rc, err := rest.RESTClientFor(&rest.Config{Host: srv.URL, APIPath: "/api", Timeout: time.Minute, ContentConfig: rest.ContentConfig{
					GroupVersion: &corev1.SchemeGroupVersion, NegotiatedSerializer: scheme.Codecs.WithoutConversion()}})
				if err != nil {
					t.Fatal(err)
				}
				list = append(list, &resource.Info{Client: rc, Mapping: mapping, Namespace: "ns", Name: name})
			}
			readObjectsAhead(list)
			// Both reads sent ahead have reached the server.
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
				mu.Lock()
				sent := gets["a"] == 1 && gets["b"] == 1
				mu.Unlock()
				if sent {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the reads sent ahead never reached the server")
				}
			}
			tt.then(t, resource.NewHelper(list[0].Client, mapping), resource.NewHelper(list[1].Client, mapping))
			mu.Lock()
			defer mu.Unlock()
			if got := [2]int{gets["a"], gets["b"]}; got != tt.want {
				t.Errorf("GETs of a and b at the server: %v, want %v", got, tt.want)
			}
		})
	}
}

// get reads name through h and checks whether the answer was NotFound.
func get(t *testing.T, h *resource.Helper, name string, notFound bool) {
	t.Helper()
	_, err := h.Get("ns", name)
	if apierrors.IsNotFound(err) != notFound || (err != nil && !notFound) {
		t.Errorf("GET %s: %v, want not found: %v", name, err, notFound)
	}
}
