package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/magnum-capi/magnum-capi/server/kube"
	"github.com/magnum-capi/magnum-capi/server/watchcache"
)

// Live mode: `magnum-capi status --cluster NAME --namespace NS` reads the same
// objects from the management cluster instead of a directory, once and
// without a cache, and then answers exactly as --from-dir does. The reads are
// the management-cluster adapter's (watchcache.ReadLive): the kinds and
// labels the sidecar's watch cache follows.

// liveReader, when set, replaces the management-cluster read (unit tests of
// the command, which need no API server).
var liveReader func(ctx context.Context, namespace, cluster string) ([]*unstructured.Unstructured, error)

// liveFlags are the live mode's flags.
type liveFlags struct{ cluster, namespace, kubeconfig, context string }

func (l *liveFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&l.cluster, "cluster", "", "live mode: read the cluster with this stack_id from the management cluster (instead of --from-dir)")
	fs.StringVar(&l.namespace, "namespace", "", "live mode: the cluster's namespace in the management cluster (magnum-<project id without dashes>)")
	fs.StringVar(&l.kubeconfig, "kubeconfig", "", "live mode: kubeconfig of the management cluster (default: $KUBECONFIG, else ~/.kube/config)")
	fs.StringVar(&l.context, "context", "", "live mode: kubeconfig context (default: its current context)")
}

func (l liveFlags) requested() bool {
	return l.cluster != "" || l.namespace != "" || l.kubeconfig != "" || l.context != ""
}

func (l liveFlags) read(ctx context.Context) ([]*unstructured.Unstructured, error) {
	if l.cluster == "" || l.namespace == "" {
		return nil, errors.New("live mode needs both --cluster and --namespace")
	}
	read := liveReader
	if read == nil {
		read = l.readManagementCluster
	}
	objs, err := read(ctx, l.namespace, l.cluster)
	if err != nil {
		return nil, &statusIOError{fmt.Errorf("reading cluster %s in namespace %s: %w", l.cluster, l.namespace, err)}
	}
	return objs, nil
}

// readManagementCluster connects with --kubeconfig and --context and reads
// the cluster's objects once.
func (l liveFlags) readManagementCluster(ctx context.Context, namespace, cluster string) ([]*unstructured.Unstructured, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = l.kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: l.context}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("--kubeconfig %q --context %q: %w", l.kubeconfig, l.context, err)
	}
	mc, err := kube.Connect("live", cfg)
	if err != nil {
		return nil, err
	}
	return watchcache.ReadLive(ctx, mc.Client, namespace, cluster)
}
