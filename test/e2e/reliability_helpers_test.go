package e2e

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/applicationcredentials"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/magnum-capi/magnum-capi/test/harness"
)

// What the reliability tests compare: everything the driver could have
// written, in every management cluster and in Keystone.

// footprint maps "<management cluster> <kind> <namespace>/<name>" to the
// object's resourceVersion (application credentials: to their id).
type footprint map[string]string

// driverFootprint records the namespaces, the Secrets (Helm's release
// records among them; not Cluster API's own), Leases and CAPI Clusters of
// the driver's namespaces (prefix "magnum-") in both management clusters,
// and the stack user's application credentials. kube-system is left out on purpose: the API
// server renews its own Leases there every few seconds.
func driverFootprint(t *testing.T) footprint {
	t.Helper()
	ctx := context.Background()
	fp := footprint{}
	envs := map[string]client.Client{"default": stack.Env.Client}
	if stack.SecondEnv != nil {
		envs[harness.SecondManagementClusterName] = stack.SecondEnv.Client
	}
	for mc, kc := range envs {
		var nss corev1.NamespaceList
		if err := kc.List(ctx, &nss); err != nil {
			t.Fatalf("listing namespaces of %s: %v", mc, err)
		}
		for _, ns := range nss.Items {
			if !strings.HasPrefix(ns.Name, "magnum-") {
				continue
			}
			// A namespace's resourceVersion does not change with its
			// contents; its existence is what counts.
			fp[mc+" Namespace "+ns.Name] = ""
			lists := map[string]client.ObjectList{"Secret": &corev1.SecretList{}, "Lease": &coordinationv1.LeaseList{}, "Cluster": &clusterv1.ClusterList{}}
			for kind, list := range lists {
				if err := kc.List(ctx, list, client.InNamespace(ns.Name)); err != nil {
					t.Fatalf("listing %ss in %s/%s: %v", kind, mc, ns.Name, err)
				}
				objs, err := metaItems(list)
				if err != nil {
					t.Fatal(err)
				}
				for _, o := range objs {
					if ownedByClusterAPI(o) {
						// Cluster API's own Secrets (the kubeconfig,
						// bootstrap data) go with their owners through
						// the garbage collector, some time after the
						// cluster is gone; they are not the driver's.
						continue
					}
					version := o.GetResourceVersion()
					if kind == "Cluster" {
						// The Cluster API controllers keep writing the
						// status of other tests' Clusters; the driver
						// never writes a Cluster itself, so only its
						// existence counts.
						version = ""
					}
					fp[fmt.Sprintf("%s %s %s/%s", mc, kind, o.GetNamespace(), o.GetName())] = version
				}
			}
		}
	}
	for _, ac := range userCredentials(t, stack.Info.User.ID) {
		fp["keystone ApplicationCredential "+ac.Name] = ac.ID
	}
	return fp
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

func metaItems(list client.ObjectList) ([]client.Object, error) {
	var out []client.Object
	switch l := list.(type) {
	case *corev1.SecretList:
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	case *coordinationv1.LeaseList:
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	case *clusterv1.ClusterList:
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	default:
		return nil, fmt.Errorf("metaItems: unexpected list %T", list)
	}
	return out, nil
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
// changed (resourceVersion) entries, sorted.
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
