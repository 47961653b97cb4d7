package clusters

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/magnum-capi/magnum-capi/capistatus"
	"github.com/magnum-capi/magnum-capi/certs"
	"github.com/magnum-capi/magnum-capi/helmvalues"
	"github.com/magnum-capi/magnum-capi/server/kube"
	"github.com/magnum-capi/magnum-capi/server/openstack"
	"github.com/magnum-capi/magnum-capi/server/watchcache"
)

// cleanupKeystone deletes credentials, or refuses with err.
type cleanupKeystone struct {
	OpenStack
	err     error
	deleted []string
}

func (f *cleanupKeystone) CredentialIDFromClouds(b []byte) (string, error) { return string(b), nil }
func (f *cleanupKeystone) ClusterCredentials(context.Context, helmvalues.Cluster) ([]openstack.CredentialRef, error) {
	return nil, nil
}
func (f *cleanupKeystone) DeleteCredential(_ context.Context, _ helmvalues.Cluster, id string) error {
	if f.err != nil {
		return f.err
	}
	f.deleted = append(f.deleted, id)
	return nil
}

// cachedObjects is a watch cache holding objs for every cluster.
type cachedObjects struct {
	WatchCache
	objs watchcache.Objects
}

func (c *cachedObjects) Objects(context.Context, string, string) (*watchcache.Objects, error) {
	o := c.objs
	return &o, nil
}

type refused struct{ permanent bool }

func (e refused) Error() string            { return "deleting: Keystone said 403" }
func (e refused) FailedPrecondition() bool { return e.permanent }

const (
	cleanupNS    = "magnum-p"
	cleanupStack = "gone-abcdefghijkl"
	cleanupUUID  = "5d12f6fd-a196-4bf0-ae4c-1f639a523a52"
)

// cleanupFixture is a management cluster holding the deleted cluster's
// marker (when marked), credential Secret and CA Secret.
func cleanupFixture(marked bool) client.Client {
	own := map[string]string{certs.ClusterUUIDLabel: cleanupUUID}
	objs := []client.Object{
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: cleanupNS, Name: credentialSecretName(cleanupStack), Labels: own}, Data: map[string][]byte{cloudsYAMLKey: []byte("cred-1")}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: cleanupNS, Name: cleanupStack + "-ca", Labels: own}},
	}
	if marked {
		op := &operation{spec: Spec{Cluster: helmvalues.Cluster{StackID: cleanupStack, UUID: cleanupUUID, ProjectID: "p"}}, ns: cleanupNS}
		objs = append(objs, cleanupMarker(op))
	}
	// The leftovers' kinds, known to the fake's REST mapper.
	mapper := meta.NewDefaultRESTMapper(nil)
	for _, gvk := range []schema.GroupVersionKind{
		{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta1", Kind: "OpenStackMachineTemplate"},
		{Group: "bootstrap.cluster.x-k8s.io", Version: "v1beta2", Kind: "KubeadmConfigTemplate"},
		{Version: "v1", Kind: "Secret"},
	} {
		mapper.Add(gvk, meta.RESTScopeNamespace)
	}
	return fake.NewClientBuilder().WithRESTMapper(mapper).WithObjects(objs...).Build()
}

// TestCleanupReconciler: the reconciler cleans up only a marked cluster
// Cluster API has deleted, removes the marker last, and records a failure
// on the marker, where the status path reads what is left.
func TestCleanupReconciler(t *testing.T) {
	tests := []struct {
		name       string
		marked     bool
		objs       watchcache.Objects
		keystone   error
		wantLeft   []string // Secrets left, sorted
		wantStatus string
		wantReason string
	}{
		{"an earlier sidecar's deletion, not offered yet", false, watchcache.Objects{}, nil,
			[]string{cleanupStack + "-ca", credentialSecretName(cleanupStack)}, statusDeleteInProgress, cleanupPending},
		{"Cluster API still deleting", true, watchcache.Objects{Cluster: &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: cleanupStack}}}, nil,
			[]string{cleanupStack + "-ca", cleanupMarkerName(cleanupStack), credentialSecretName(cleanupStack)}, statusDeleteInProgress, cleanupPending},
		{"all gone", true, watchcache.Objects{}, nil, nil, statusDeleteComplete, ""},
		{"Keystone refuses for now", true, watchcache.Objects{}, refused{},
			[]string{cleanupStack + "-ca", cleanupMarkerName(cleanupStack), credentialSecretName(cleanupStack)}, statusDeleteInProgress, "403"},
		{"Keystone refuses for good", true, watchcache.Objects{}, refused{permanent: true},
			[]string{cleanupStack + "-ca", cleanupMarkerName(cleanupStack), credentialSecretName(cleanupStack)}, statusDeleteFailed, "403"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := cleanupFixture(tt.marked)
			mc := &ManagementCluster{Name: "default", Kube: &kube.Cluster{Client: c}, Cache: &cachedObjects{objs: tt.objs}}
			ks := &cleanupKeystone{err: tt.keystone}
			s := &Service{log: slog.New(slog.DiscardHandler), openstack: ks, mgmt: []*ManagementCluster{mc}, byName: map[string]*ManagementCluster{"default": mc}, cleanups: newCleanupQueue()}
			defer s.cleanups.ShutDown()
			ctx := context.Background()
			_, err := s.reconcileCleanup(ctx, clusterKey{"default", cleanupNS, cleanupStack})
			if (err != nil) != (tt.keystone != nil) {
				t.Errorf("reconcile: %v, want an error: %v", err, tt.keystone != nil)
			}
			var list corev1.SecretList
			if err := c.List(ctx, &list); err != nil {
				t.Fatal(err)
			}
			var left []string
			for _, s := range list.Items {
				left = append(left, s.Name)
			}
			if strings.Join(left, ",") != strings.Join(tt.wantLeft, ",") {
				t.Errorf("Secrets left %v, want %v", left, tt.wantLeft)
			}
			if tt.name == "all gone" && strings.Join(ks.deleted, ",") != "cred-1" {
				t.Errorf("credentials deleted %v, want cred-1", ks.deleted)
			}
			op := &operation{spec: Spec{Cluster: helmvalues.Cluster{StackID: cleanupStack, UUID: cleanupUUID, Status: "DELETE_IN_PROGRESS"}}, mc: mc, ns: cleanupNS}
			what, err := s.cleanupLeft(ctx, op)
			if err != nil {
				t.Fatal(err)
			}
			res := withCleanup(capistatus.Result{Status: statusDeleteComplete}, what)
			if res.Status != tt.wantStatus || !strings.Contains(res.StatusReason, tt.wantReason) {
				t.Errorf("status %s %q, want %s with %q", res.Status, res.StatusReason, tt.wantStatus, tt.wantReason)
			}
		})
	}
}

// A cluster whose marker is gone is done whatever else the queue says.
func TestCleanupOfAnUnknownManagementCluster(t *testing.T) {
	s := &Service{log: slog.New(slog.DiscardHandler), byName: map[string]*ManagementCluster{}}
	if recheck, err := s.reconcileCleanup(context.Background(), clusterKey{"gone", cleanupNS, cleanupStack}); recheck || err != nil {
		t.Errorf("reconcile = %v, %v; want done", recheck, err)
	}
}

// TestCleanupOfAnEarlierSidecarsDeletion: a cluster an earlier sidecar
// deleted has no marker; the status poll offers it (writing nothing), the
// reconciler marks it and cleans up, and the next poll says DELETE_COMPLETE.
func TestCleanupOfAnEarlierSidecarsDeletion(t *testing.T) {
	c := cleanupFixture(false)
	mc := &ManagementCluster{Name: "default", Kube: &kube.Cluster{Client: c}, Cache: &cachedObjects{}}
	ks := &cleanupKeystone{}
	s := &Service{log: slog.New(slog.DiscardHandler), openstack: ks, mgmt: []*ManagementCluster{mc}, byName: map[string]*ManagementCluster{"default": mc}, cleanups: newCleanupQueue()}
	defer s.cleanups.ShutDown()
	ctx := context.Background()
	op := &operation{spec: Spec{Cluster: helmvalues.Cluster{StackID: cleanupStack, UUID: cleanupUUID, ProjectID: "p", Status: "DELETE_IN_PROGRESS"}}, mc: mc, ns: cleanupNS}
	var states []string
	for range 2 {
		left, err := s.cleanupLeft(ctx, op)
		if err != nil {
			t.Fatal(err)
		}
		res := withCleanup(capistatus.Result{Status: statusDeleteComplete}, left)
		states = append(states, res.Status)
		if left == nil {
			continue
		}
		if s.cleanups.Len() != 1 {
			t.Fatalf("the poll queued %d clusters, want 1", s.cleanups.Len())
		}
		if key, _ := s.cleanups.Get(); key.stackID == cleanupStack {
			if _, err := s.reconcileCleanup(ctx, key); err != nil {
				t.Fatal(err)
			}
			s.cleanups.Done(key)
		}
	}
	var list corev1.SecretList
	if err := c.List(ctx, &list); err != nil {
		t.Fatal(err)
	}
	if want := []string{statusDeleteInProgress, statusDeleteComplete}; strings.Join(states, ",") != strings.Join(want, ",") || len(list.Items) != 0 || strings.Join(ks.deleted, ",") != "cred-1" {
		t.Errorf("statuses %v, Secrets left %d, credentials deleted %v; want %v, none, cred-1", states, len(list.Items), ks.deleted, want)
	}
}
