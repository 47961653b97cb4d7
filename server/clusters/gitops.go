package clusters

import (
	"context"
	"sort"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"

	"github.com/magnum-capi/magnum-capi/helmvalues"
	"github.com/magnum-capi/magnum-capi/server/kube"
)

// GitOps configures the Argo CD hand-off (docs/gitops.md).
type GitOps struct {
	// RegisterByDefault registers clusters whose template does not say
	// argocd_register; Namespace and Project are where the Secrets go and
	// the AppProject they name.
	RegisterByDefault bool
	Namespace         string
	Project           string
	// Target is the cluster Argo CD runs on; nil: each Magnum cluster's
	// own management cluster.
	Target *kube.Cluster
	// Observe counts each write ("apply" or "delete") and its outcome.
	Observe func(action string, err error)
}

// The hand-off runs in its own reconciler (gitops_reconciler.go), never in
// a status poll: a poll only offers the Magnum facts it was given
// (offerHandOff), in memory and without a request; what was handed off is
// recorded in the management cluster (gitops_record.go).
const (
	// A failed hand-off is retried after gitopsRetryMin, doubling up to
	// gitopsRetryMax, so an Argo CD cluster that is down is not hammered.
	gitopsRetryMin = 10 * time.Second
	gitopsRetryMax = 5 * time.Minute
	// gitopsTimeout bounds one attempt (read the kubeconfig and the record,
	// write or delete the Secret): an Argo CD cluster that hangs holds a
	// worker no longer.
	gitopsTimeout = 30 * time.Second
	// gitopsDeleteTimeout bounds the delete at the start of a deletion,
	// inside Magnum's call: the reconciler and the cleanup delete it again.
	gitopsDeleteTimeout = 5 * time.Second
	// gitopsRecheck is how soon a cluster whose API is up but whose
	// kubeconfig Secret Cluster API has not written (yet, or again after a
	// CA rotation; no watch event tells of it) is looked at again.
	gitopsRecheck = 10 * time.Second
	// gitopsRefresh is how often a registered cluster is looked at although
	// nothing the watch cache saw changed: Cluster API renews the admin
	// client certificate in the kubeconfig Secret on its own (months before
	// it expires). Two reads per cluster a day, and a write when it changed.
	gitopsRefresh = 24 * time.Hour
	// gitopsWorkers hand off that many clusters at once.
	gitopsWorkers = 2
)

// gitops is the hand-off's configuration, its queue, and what the status
// polls offered: the Magnum facts of clusters whose record (in the
// management cluster) may be older. offered is a hint, not state: the next
// poll of the cluster gives it again after a restart.
type gitops struct {
	cfg   GitOps
	queue workqueue.TypedRateLimitingInterface[clusterKey]
	mu    sync.Mutex
	// offered: stack_id -> the facts a poll gave, until they are recorded.
	offered map[string]Spec
	// recorded: stack_id -> gitopsKey of the facts last recorded, so a
	// steady poll offers nothing.
	recorded map[string]string
	// deleted: stack_id -> this process deleted the Argo CD Secret of the
	// cluster being deleted, so the deletion's further events send no
	// DELETE.
	deleted map[string]bool
}

func newGitOps(cfg *GitOps) *gitops {
	if cfg == nil {
		return nil
	}
	if cfg.Observe == nil {
		cfg.Observe = func(string, error) {}
	}
	q := workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[clusterKey](gitopsRetryMin, gitopsRetryMax),
		workqueue.TypedRateLimitingQueueConfig[clusterKey]{Name: "gitops"})
	return &gitops{cfg: *cfg, queue: q, offered: map[string]Spec{}, recorded: map[string]string{}, deleted: map[string]bool{}}
}

// gitopsKey names the Magnum facts the Secret carries, so a change of them
// (a node group added, the template changed) is offered again.
func gitopsKey(spec Spec) string {
	ngs := make([]string, 0, len(spec.NodeGroups))
	for _, ng := range spec.NodeGroups {
		ngs = append(ngs, ng.Name+"="+ng.Role)
	}
	sort.Strings(ngs)
	register, given := spec.Template.Labels[helmvalues.ArgoCDRegisterLabel]
	if !given {
		register = "-"
	}
	return strings.Join([]string{spec.Cluster.Name, spec.Template.UUID, spec.Template.Name, register, strings.Join(ngs, ",")}, "|")
}

// usable: the statuses at which a cluster's facts are offered to the
// hand-off: its API is up and Magnum is not deleting it.
func usable(status string) bool {
	return strings.HasSuffix(status, "_COMPLETE") && !strings.HasPrefix(status, "DELETE_")
}

// offerHandOff gives the reconciler the Magnum facts of a complete cluster
// whose record may be older: in memory only, no request. A steady poll
// offers nothing.
func (s *Service) offerHandOff(o observation, status string) {
	g := s.gitops
	if g == nil || !usable(status) {
		return
	}
	spec := o.op.spec
	stackID := spec.Cluster.StackID
	g.mu.Lock()
	fresh := g.recorded[stackID] != gitopsKey(spec)
	if fresh {
		g.offered[stackID] = spec
	}
	g.mu.Unlock()
	if fresh {
		g.queue.Add(clusterKey{o.op.mc.Name, o.op.ns, stackID})
	}
}

// takeOffer is what a poll offered for the cluster, if anything.
func (g *gitops) takeOffer(stackID string) (Spec, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	spec, ok := g.offered[stackID]
	return spec, ok
}

// recordedAs notes that the facts of spec are recorded, dropping the offer
// they came from (a newer one stays).
func (g *gitops) recordedAs(spec Spec) {
	g.mu.Lock()
	defer g.mu.Unlock()
	key := gitopsKey(spec)
	g.recorded[spec.Cluster.StackID] = key
	if o, ok := g.offered[spec.Cluster.StackID]; ok && gitopsKey(o) == key {
		delete(g.offered, spec.Cluster.StackID)
	}
}

// unregistered says whether this process deleted the Argo CD Secret of the
// cluster being deleted.
func (g *gitops) unregistered(stackID string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.deleted[stackID]
}

// markUnregistered notes that the deletion's Argo CD Secret is gone, until
// the cleanup after delete forgets the cluster.
func (g *gitops) markUnregistered(stackID string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.deleted[stackID] = true
}

// forget drops what is known of a cluster.
func (g *gitops) forget(stackID string) {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.offered, stackID)
	delete(g.recorded, stackID)
	delete(g.deleted, stackID)
}

// target is the client of the cluster Argo CD's Secrets go to.
func (g *gitops) target(op *operation) Secrets {
	if g.cfg.Target != nil {
		return g.cfg.Target
	}
	return op.mc.Kube
}

// unregisterGitOps deletes the cluster's Argo CD Secret. Idempotent: a
// Secret already gone is done.
func (s *Service) unregisterGitOps(ctx context.Context, op *operation) error {
	return s.gitops.target(op).DeleteSecret(ctx, s.gitops.cfg.Namespace, gitopsSecretName(op.stackID()))
}

// removeFromGitOps is the delete's part: Argo CD stops deploying to the
// cluster as soon as its deletion starts. The Secret is removed again by
// the cleanup after Cluster API has deleted everything, which must
// succeed before DELETE_COMPLETE, so nothing leaks if this fails; the
// record goes with the cluster's other Secrets.
func (s *Service) removeFromGitOps(ctx context.Context, op *operation) error {
	if s.gitops == nil {
		return nil
	}
	s.gitops.forget(op.stackID())
	ctx, cancel := context.WithTimeout(ctx, gitopsDeleteTimeout)
	defer cancel()
	err := s.unregisterGitOps(ctx, op)
	s.gitops.cfg.Observe("delete", err)
	return err
}
