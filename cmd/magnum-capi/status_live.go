package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Live mode: `magnum-capi status --cluster NAME --namespace NS` reads the same
// objects from the management cluster instead of a directory, and then
// answers exactly as --from-dir does.
//
// The Kubernetes reads belong to the management-cluster adapter, not to this
// command. That code sets liveReader (from its own file, in an init function)
// to a function returning the cluster's Cluster, OpenStackCluster,
// KubeadmControlPlane, MachineDeployments, Machines, HelmReleases, Manifests
// and Helm release Secrets of namespace as unstructured objects, the same list
// readObjectDir returns. Until then --cluster reports that it is unavailable.
var liveReader func(ctx context.Context, namespace, cluster string) ([]*unstructured.Unstructured, error)

// liveFlags are the live mode's flags.
type liveFlags struct{ cluster, namespace string }

func (l *liveFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&l.cluster, "cluster", "", "live mode: read the cluster with this stack_id from the management cluster (instead of --from-dir)")
	fs.StringVar(&l.namespace, "namespace", "", "live mode: the cluster's namespace in the management cluster")
}

func (l liveFlags) requested() bool { return l.cluster != "" || l.namespace != "" }

func (l liveFlags) read(ctx context.Context) ([]*unstructured.Unstructured, error) {
	if l.cluster == "" || l.namespace == "" {
		return nil, errors.New("live mode needs both --cluster and --namespace")
	}
	if liveReader == nil {
		return nil, errors.New("--cluster: this build cannot read the management cluster yet; dump the objects with kubectl and use --from-dir")
	}
	objs, err := liveReader(ctx, l.namespace, l.cluster)
	if err != nil {
		return nil, &statusIOError{fmt.Errorf("reading cluster %s in namespace %s: %w", l.cluster, l.namespace, err)}
	}
	return objs, nil
}
