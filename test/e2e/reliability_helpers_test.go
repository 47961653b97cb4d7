package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/applicationcredentials"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/magnum-capi/magnum-capi/certs"
	"github.com/magnum-capi/magnum-capi/server/kube"
	"github.com/magnum-capi/magnum-capi/test/harness"
	"github.com/magnum-capi/magnum-capi/test/openstackfake"
)

// What the reliability tests compare: what the operation under test could
// have written, and nothing else, so that another cluster's objects (one
// the controllers are still converging, one a previous test is deleting)
// cannot make a footprint change.

// footprint maps "<management cluster> <kind> <namespace>/<name>" to what
// the driver could have changed of the object: nothing but existence for
// namespaces and Leases; for Secrets (the driver's own, Helm's release
// records) a digest of their labels, annotations and data, which the
// controllers that adopt them (ownerReferences) do not touch; for CAPI
// Clusters their generation (Helm's writes of the spec) and the driver's
// delete-requested annotation, not the status the controllers write; for
// application credentials and Nova server groups their id.
type footprint map[string]string

// owner names a cluster whose objects a footprint records: its uuid, and
// its stack_id once it has one.
type owner struct{ stackID, uuid string }

func (c *cluster) owner() owner { return owner{c.spec.Cluster.StackId, c.spec.Cluster.Uuid} }

// owns: obj is the cluster's, by its uuid label or (objects the
// controllers make, e.g. the kubeconfig Secret) its stack_id in the name.
func (o owner) owns(obj client.Object) bool {
	if o.uuid != "" && obj.GetLabels()[certs.ClusterUUIDLabel] == o.uuid {
		return true
	}
	return o.stackID != "" && strings.Contains(obj.GetName(), o.stackID)
}

// footprintOf records the driver's namespaces (prefix "magnum-") in both
// management clusters, and of the owners' clusters their Secrets, Leases
// and CAPI Clusters there and their Argo CD cluster Secrets, their
// application credentials in Keystone and their server groups in Nova.
func footprintOf(t *testing.T, owners ...owner) footprint {
	t.Helper()
	fp := footprint{}
	envs := map[string]client.Client{"default": stack.Env.Client}
	if stack.SecondEnv != nil {
		envs[harness.SecondManagementClusterName] = stack.SecondEnv.Client
	}
	for mc, kc := range envs {
		var nss corev1.NamespaceList
		if err := kc.List(context.Background(), &nss); err != nil {
			t.Fatalf("listing namespaces of %s: %v", mc, err)
		}
		for _, ns := range nss.Items {
			if strings.HasPrefix(ns.Name, "magnum-") {
				fp[mc+" Namespace "+ns.Name] = ""
				recordOwned(t, fp, mc, kc, ns.Name, owners)
			}
			// Argo CD's namespace (the tests make it; not the driver's)
			// holds the GitOps hand-off's cluster Secrets
			// (gitops_test.go), labelled with the cluster's uuid.
			if ns.Name == argoCDNamespace {
				recordOwned(t, fp, mc, kc, ns.Name, owners)
			}
		}
	}
	for _, o := range owners {
		for _, ac := range credentialsOf(t, stack.Info.User.ID, o.uuid) {
			fp["keystone ApplicationCredential "+ac.Name] = ac.ID
		}
		for _, g := range serverGroupsOf(o.stackID) {
			fp["nova ServerGroup "+g.Name] = g.ID
		}
	}
	return fp
}

// serverGroupsOf are the Nova server groups of the test project named for
// a stack_id (<stack_id>-control-plane, <stack_id>-<node group>); none
// before the cluster has a stack_id.
func serverGroupsOf(stackID string) []openstackfake.ServerGroup {
	if stackID == "" {
		return nil
	}
	var out []openstackfake.ServerGroup
	for _, g := range stack.OpenStack.ServerGroups(stack.Info.Project.ID) {
		if strings.HasPrefix(g.Name, stackID+"-") {
			out = append(out, g)
		}
	}
	return out
}

// recordOwned adds the owners' objects in one namespace to fp.
func recordOwned(t *testing.T, fp footprint, mc string, kc client.Client, ns string, owners []owner) {
	t.Helper()
	var secrets corev1.SecretList
	var leases coordinationv1.LeaseList
	var clusters clusterv1.ClusterList
	for _, list := range []client.ObjectList{&secrets, &leases, &clusters} {
		if err := kc.List(context.Background(), list, client.InNamespace(ns)); err != nil {
			t.Fatalf("listing %T in %s/%s: %v", list, mc, ns, err)
		}
	}
	add := func(kind string, obj client.Object, state string) {
		if ownedByClusterAPI(obj) && obj.GetLabels()[certs.ClusterUUIDLabel] == "" {
			// What the Cluster API controllers make and own (bootstrap
			// data, the kubeconfig) goes with its owner through the
			// garbage collector, some time after the cluster is gone;
			// the driver never writes it. The driver's own Secrets keep
			// its uuid label when the controllers adopt them.
			return
		}
		for _, o := range owners {
			if o.owns(obj) {
				fp[fmt.Sprintf("%s %s %s/%s", mc, kind, ns, obj.GetName())] = state
				return
			}
		}
	}
	for i := range secrets.Items {
		s := &secrets.Items[i]
		add("Secret", s, digest(s.Labels, s.Annotations, s.Data))
	}
	for i := range leases.Items {
		add("Lease", &leases.Items[i], "")
	}
	for i := range clusters.Items {
		c := &clusters.Items[i]
		add("Cluster", c, fmt.Sprintf("generation %d, delete requested %q", c.Generation, c.Annotations[kube.DeleteRequestedAnnotation]))
	}
}

// ownedByClusterAPI reports whether a Cluster API object owns o.
func ownedByClusterAPI(o client.Object) bool {
	for _, ref := range o.GetOwnerReferences() {
		if strings.HasSuffix(strings.SplitN(ref.APIVersion, "/", 2)[0], "cluster.x-k8s.io") {
			return true
		}
	}
	return false
}

// digest is a short hash of values' JSON (maps are encoded sorted).
func digest(values ...any) string {
	raw, err := json.Marshal(values)
	if err != nil {
		return "unencodable: " + err.Error()
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:8])
}

// userCredentials lists all of a user's application credentials, as
// Keystone's admin.
func userCredentials(t *testing.T, userID string) []applicationcredentials.ApplicationCredential {
	t.Helper()
	pages, err := applicationcredentials.List(stack.Keystone.Admin(), userID, applicationcredentials.ListOpts{}).AllPages(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	all, err := applicationcredentials.ExtractApplicationCredentials(pages)
	if err != nil {
		t.Fatal(err)
	}
	return all
}

// changes lists what differs from before to after: added, removed and
// changed entries, sorted.
func (before footprint) changes(after footprint) []string {
	var out []string
	for k, v := range after {
		old, ok := before[k]
		switch {
		case !ok:
			out = append(out, "added "+k)
		case old != v:
			out = append(out, "changed "+k)
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			out = append(out, "removed "+k)
		}
	}
	sort.Strings(out)
	return out
}

// clusterFootprint is the subset of a footprint that belongs to one stack_id
// or cluster uuid (its Secrets, release records, Lease, CAPI Cluster and
// application credentials).
func (fp footprint) of(stackID, clusterUUID string) []string {
	var out []string
	for k := range fp {
		name := k[strings.LastIndex(k, " ")+1:]
		if i := strings.Index(name, "/"); i >= 0 {
			name = name[i+1:]
		}
		if strings.Contains(name, stackID) || strings.Contains(name, clusterUUID) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}
