package stackhpc

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// WaitReady waits until the installed cluster is what the StackHPC driver
// would have reported CREATE_COMPLETE (and then some): its Cluster is
// Available, it has want Running Machines, its MachineDeployments count
// them ready, and every addon is Deployed.
func WaitReady(ctx context.Context, kubeconfig, ns, stackID string, want int) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	kc, err := client.New(cfg, client.Options{})
	if err != nil {
		return err
	}
	var why string
	for {
		if why, err = notReady(ctx, kc, ns, stackID, want); err == nil && why == "" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cluster %s/%s not ready: %s (%v)", ns, stackID, why, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func list(ctx context.Context, kc client.Client, gvk schema.GroupVersionKind, ns string, labels map[string]string) ([]unstructured.Unstructured, error) {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	err := kc.List(ctx, l, client.InNamespace(ns), client.MatchingLabels(labels))
	return l.Items, err
}

// notReady says what the cluster still lacks; "" when nothing.
func notReady(ctx context.Context, kc client.Client, ns, stackID string, want int) (string, error) {
	cl := &unstructured.Unstructured{}
	cl.SetGroupVersionKind(schema.GroupVersionKind{Group: "cluster.x-k8s.io", Version: "v1beta2", Kind: "Cluster"})
	if err := kc.Get(ctx, client.ObjectKey{Namespace: ns, Name: stackID}, cl); err != nil {
		return "the Cluster", err
	}
	conds, _, _ := unstructured.NestedSlice(cl.Object, "status", "conditions")
	available := "no Available condition"
	for _, c := range conds {
		if c, ok := c.(map[string]any); ok && c["type"] == "Available" {
			available = fmt.Sprintf("Available %v: %v", c["status"], c["message"])
		}
	}
	if available != "Available True: <nil>" && !strings.HasPrefix(available, "Available True:") {
		return "the Cluster to be Available (" + available + ")", nil
	}
	machines, err := list(ctx, kc, schema.GroupVersionKind{Group: "cluster.x-k8s.io", Version: "v1beta2", Kind: "Machine"}, ns,
		map[string]string{"cluster.x-k8s.io/cluster-name": stackID})
	if err != nil {
		return "Machines", err
	}
	running := 0
	for _, m := range machines {
		if phase, _, _ := unstructured.NestedString(m.Object, "status", "phase"); phase == "Running" && m.GetDeletionTimestamp() == nil {
			running++
		}
	}
	if running != want || len(machines) != want {
		return fmt.Sprintf("%d Running Machines of %d (want %d)", running, len(machines), want), nil
	}
	// What health reads: each MachineDeployment's readyReplicas, which the
	// controllers aggregate from the machines a moment after they run.
	mds, err := list(ctx, kc, schema.GroupVersionKind{Group: "cluster.x-k8s.io", Version: "v1beta2", Kind: "MachineDeployment"}, ns,
		map[string]string{"cluster.x-k8s.io/cluster-name": stackID})
	if err != nil {
		return "MachineDeployments", err
	}
	for _, md := range mds {
		desired, _, _ := unstructured.NestedInt64(md.Object, "spec", "replicas")
		ready, _, _ := unstructured.NestedInt64(md.Object, "status", "readyReplicas")
		if ready != desired {
			return fmt.Sprintf("MachineDeployment %s: %d of %d ready", md.GetName(), ready, desired), nil
		}
	}
	for _, kind := range []string{"HelmRelease", "Manifests"} {
		addons, err := list(ctx, kc, schema.GroupVersionKind{Group: "addons.stackhpc.com", Version: "v1alpha1", Kind: kind}, ns,
			map[string]string{"capi.stackhpc.com/cluster": stackID})
		if err != nil {
			return kind, err
		}
		if len(addons) == 0 {
			return "addons", nil
		}
		for _, a := range addons {
			if phase, _, _ := unstructured.NestedString(a.Object, "status", "phase"); phase != "Deployed" {
				return fmt.Sprintf("%s %s (%s)", kind, a.GetName(), phase), nil
			}
		}
	}
	return "", nil
}
