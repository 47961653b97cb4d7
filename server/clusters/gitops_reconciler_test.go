package clusters

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/magnum-capi/magnum-capi/helmvalues"
	"github.com/magnum-capi/magnum-capi/server/kube"
	"github.com/magnum-capi/magnum-capi/server/watchcache"
)

// handOffWorld is one management cluster (Argo CD's namespace on it) with
// one cluster, a sidecar's Service on it, and what the hand-off did.
type handOffWorld struct {
	c        client.Client
	cache    *cachedObjects
	observed []string
	s        *Service
}

const handOffNS = "magnum-p"

func newHandOffWorld(t *testing.T, c client.Client) *handOffWorld {
	t.Helper()
	w := &handOffWorld{c: c, cache: &cachedObjects{}}
	mc := &ManagementCluster{Name: "default", Kube: &kube.Cluster{Client: c}, Cache: w.cache}
	w.s = &Service{
		log: slog.New(slog.DiscardHandler), mgmt: []*ManagementCluster{mc}, byName: map[string]*ManagementCluster{"default": mc},
		gitops: newGitOps(&GitOps{RegisterByDefault: true, Namespace: "argocd", Project: "platform", Observe: func(action string, err error) {
			w.observed = append(w.observed, fmt.Sprintf("%s %v", action, err))
		}}),
	}
	t.Cleanup(w.s.gitops.queue.ShutDown)
	return w
}

// kubeconfig is Cluster API's admin kubeconfig Secret with token.
func kubeconfig(stackID, token string) *corev1.Secret {
	ca := base64.StdEncoding.EncodeToString([]byte("CA"))
	value := "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://203.0.113.10:6443', certificate-authority-data: " + ca + "}}]\n" +
		"users: [{name: u, user: {token: " + token + "}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n"
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: handOffNS, Name: stackID + "-kubeconfig"}, Data: map[string][]byte{"value": []byte(value)}}
}

func initializedCluster(stackID string) *clusterv1.Cluster {
	c := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: handOffNS, Name: stackID}}
	c.Status.Initialization.ControlPlaneInitialized = new(true)
	return c
}

// TestGitOpsReconciler walks one cluster's hand-off through its life: the
// steps share a management cluster, and a restart shares it with a new
// sidecar. Each step says what the Argo CD Secret's config holds after it
// ("" none), what the record says was written, and the writes made.
func TestGitOpsReconciler(t *testing.T) {
	spec := gitopsSpec("prod", "default-master", "default-worker")
	stackID := spec.Cluster.StackID
	off := gitopsSpec("prod", "default-master", "default-worker")
	off.Template.Labels = map[string]string{helmvalues.ArgoCDRegisterLabel: "false"}
	c := fake.NewClientBuilder().Build()
	w := newHandOffWorld(t, c)
	ctx := context.Background()
	steps := []struct {
		name   string
		act    func()
		offer  *Spec
		after  time.Duration
		token  string // in the Argo CD Secret; "" none
		record string // its record's written annotation; "" none
		writes []string
		queued int // what a steady poll of spec queues after the step
	}{
		{"nothing offered, nothing recorded", func() {}, nil, 0, "", "", nil, 1},
		{"offered, the API not up", func() {
			w.cache.objs = watchcache.Objects{Cluster: &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: stackID}}}
		}, &spec, 0, "", "", nil, 1},
		{"the API up, no kubeconfig yet", func() { w.cache.objs.Cluster = initializedCluster(stackID) }, &spec, gitopsRecheck, "", "", nil, 1},
		{"the kubeconfig there", func() { mustCreate(t, c, kubeconfig(stackID, "t1")) }, &spec, gitopsRefresh, "t1", "digest", []string{"apply <nil>"}, 0},
		{"an event: nothing changed", func() {}, nil, gitopsRefresh, "t1", "digest", nil, 0},
		{"a restart: the record says it all", func() { w = restarted(t, w) }, nil, gitopsRefresh, "t1", "digest", nil, 0},
		{"Cluster API renewed the credential", func() { mustUpdate(t, c, kubeconfig(stackID, "t2")) }, nil, gitopsRefresh, "t2", "digest", []string{"apply <nil>"}, 0},
		{"the template turned the hand-off off", func() {}, &off, 0, "", gitopsAbsentDigest, []string{"delete <nil>"}, 1},
		{"on again", func() {}, &spec, gitopsRefresh, "t2", "digest", []string{"apply <nil>"}, 0},
		{"the cluster's deletion started", func() { w.cache.objs.Cluster.DeletionTimestamp = &metav1.Time{Time: time.Now()} }, nil, 0, "", "digest", []string{"delete <nil>"}, 0},
		{"an event of the deletion", func() {}, nil, 0, "", "digest", nil, 0},
		{"a restart during the deletion: deleted once again", func() { w = restarted(t, w) }, nil, 0, "", "digest", []string{"delete <nil>"}, 1},
		{"the next event of the deletion", func() {}, nil, 0, "", "digest", nil, 1},
	}
	for _, st := range steps {
		st.act()
		w.observed = nil
		if st.offer != nil {
			w.s.gitops.mu.Lock()
			w.s.gitops.offered[stackID] = *st.offer
			w.s.gitops.mu.Unlock()
		}
		after, err := w.s.reconcileGitOps(ctx, clusterKey{"default", handOffNS, stackID})
		if err != nil || after != st.after {
			t.Fatalf("%s: reconcile = %s, %v; want %s", st.name, after, err, st.after)
		}
		if got := argoToken(t, c, stackID); got != st.token {
			t.Errorf("%s: the Argo CD Secret holds token %q, want %q", st.name, got, st.token)
		}
		var rec corev1.Secret
		written := ""
		if err := c.Get(ctx, client.ObjectKey{Namespace: handOffNS, Name: gitopsRecordName(stackID)}, &rec); err == nil {
			if written = rec.Annotations[gitopsWrittenAnnotation]; written != gitopsAbsentDigest {
				written = "digest"
			}
		}
		if written != st.record || !slices.Equal(w.observed, st.writes) {
			t.Errorf("%s: record %q, writes %v; want %q, %v", st.name, written, w.observed, st.record, st.writes)
		}
		polled := observation{op: &operation{spec: spec, mc: w.s.mgmt[0], ns: handOffNS}}
		w.s.offerHandOff(polled, "CREATE_COMPLETE")
		if n := w.s.gitops.queue.Len(); n != st.queued {
			t.Errorf("%s: a steady poll queued %d, want %d", st.name, n, st.queued)
		}
		w.s.gitops.mu.Lock()
		delete(w.s.gitops.offered, stackID) // each step offers explicitly
		w.s.gitops.mu.Unlock()
		for w.s.gitops.queue.Len() > 0 {
			k, _ := w.s.gitops.queue.Get()
			w.s.gitops.queue.Done(k)
		}
	}
}

// restarted is w's management cluster with a new sidecar.
func restarted(t *testing.T, w *handOffWorld) *handOffWorld {
	n := newHandOffWorld(t, w.c)
	n.cache = w.cache
	n.s.mgmt[0].Cache = w.cache
	return n
}

// argoToken is the bearer token in the cluster's Argo CD Secret; "" none.
func argoToken(t *testing.T, c client.Client, stackID string) string {
	t.Helper()
	var s corev1.Secret
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "argocd", Name: gitopsSecretName(stackID)}, &s); err != nil {
		return ""
	}
	var cfg argoClusterConfig
	if err := json.Unmarshal(s.Data["config"], &cfg); err != nil {
		t.Fatal(err)
	}
	return cfg.BearerToken
}

func mustCreate(t *testing.T, c client.Client, o client.Object) {
	t.Helper()
	if err := c.Create(context.Background(), o); err != nil {
		t.Fatal(err)
	}
}

func mustUpdate(t *testing.T, c client.Client, o client.Object) {
	t.Helper()
	if err := c.Update(context.Background(), o); err != nil {
		t.Fatal(err)
	}
}

// TestPollsOfferTheHandOff: a health poll of a cluster Magnum holds
// complete, and a status poll answering complete, offer the hand-off the
// cluster's facts (queued, nothing written); one in progress offers none.
func TestPollsOfferTheHandOff(t *testing.T) {
	tests := []struct {
		name   string
		status string
		poll   func(s *Service, spec Spec) error
		want   int
	}{
		{"health of a complete cluster", "CREATE_COMPLETE", func(s *Service, spec Spec) error {
			_, err := s.Health(context.Background(), spec)
			return err
		}, 1},
		{"health of a cluster being updated", "UPDATE_IN_PROGRESS", func(s *Service, spec Spec) error {
			_, err := s.Health(context.Background(), spec)
			return err
		}, 0},
		{"status of a cluster being deleted", "DELETE_IN_PROGRESS", func(s *Service, spec Spec) error {
			_, err := s.Status(context.Background(), spec)
			return err
		}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBed(t)
			b.s.gitops = newGitOps(&GitOps{RegisterByDefault: true, Namespace: "argocd"})
			defer b.s.gitops.queue.ShutDown()
			spec := createdSpec()
			spec.Cluster.Status = tt.status
			if err := tt.poll(b.s, spec); err != nil {
				t.Fatal(err)
			}
			if n := b.s.gitops.queue.Len(); n != tt.want || len(b.writes()) != 0 {
				t.Errorf("queued %d, wrote %v; want %d queued, nothing written", n, b.writes(), tt.want)
			}
		})
	}
}
