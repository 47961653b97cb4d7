package clusters

import (
	"context"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/magnum-capi/magnum-capi/server/kube"
)

// The domain's ports to a management cluster: small interfaces, one concern
// each, in the adapter's own types (server/kube implements them; unit tests
// with fakes). Kube is all of them: what a ManagementCluster holds.

// Secrets reads and writes the Secrets the driver makes for its clusters.
type Secrets interface {
	// GetSecret is the Secret, nil when there is none.
	GetSecret(ctx context.Context, ns, name string) (*corev1.Secret, error)
	// ApplySecret server-side applies the Secret.
	ApplySecret(ctx context.Context, s *corev1.Secret) error
	// DeleteSecret deletes the Secret; one already gone is not an error.
	DeleteSecret(ctx context.Context, ns, name string) error
	// DeleteSecrets deletes the Secrets of ns with the labels match and
	// says how many it deleted.
	DeleteSecrets(ctx context.Context, ns string, match map[string]string) (int, error)
	// HasSecrets says whether ns has a Secret with the labels match.
	HasSecrets(ctx context.Context, ns string, match map[string]string) (bool, error)
	// SecretsWithLabel is the metadata of every Secret carrying key.
	SecretsWithLabel(ctx context.Context, key string) ([]kube.SecretMeta, error)
}

// Namespaces makes the per-project namespaces and gives the sidecar its
// rights in them.
type Namespaces interface {
	// EnsureNamespace makes the namespace with labels unless this sidecar
	// made or saw it already.
	EnsureNamespace(ctx context.Context, name string, labels map[string]string) error
	// ForgetNamespace makes the next EnsureNamespace of ns ask again.
	ForgetNamespace(ns string)
	// BindNamespace gives the sidecar's identity its role in ns.
	BindNamespace(ctx context.Context, ns string) error
}

// Leases takes the per-cluster Leases every write holds (lock.go).
type Leases interface {
	// AcquireLock takes the Lease req names, waiting while another holder
	// has it, until ctx ends (a *kube.LockedError then).
	AcquireLock(ctx context.Context, req kube.LockRequest, log *slog.Logger) (*kube.Lock, error)
}

// CAPIObjects marks and finds the Cluster API objects of a cluster.
type CAPIObjects interface {
	// AnnotateCluster sets key=value on the CAPI Cluster name in ns.
	AnnotateCluster(ctx context.Context, ns, name, key, value string) error
	// AnnotateMachine sets key=value on the CAPI Machine name in ns.
	AnnotateMachine(ctx context.Context, ns, name, key, value string) error
	// Leftovers are the objects of the release still in ns.
	Leftovers(ctx context.Context, ns, release, ownLabel string) ([]kube.Leftover, error)
	// WorkloadAccess is the admin access Cluster API issued for the
	// workload cluster; nil before its kubeconfig Secret exists.
	WorkloadAccess(ctx context.Context, ns, stackID string) (*kube.WorkloadAccess, error)
}

// HelmClients gives Helm its clients for the releases in a namespace.
type HelmClients interface {
	HelmGetter(ns string) genericclioptions.RESTClientGetter
}

// Kube is every port to one management cluster.
type Kube interface {
	Secrets
	Namespaces
	Leases
	CAPIObjects
	HelmClients
}

var _ Kube = (*kube.Cluster)(nil)
