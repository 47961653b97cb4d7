package clusters

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/magnum-capi/magnum-capi/capistatus"
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

// Back-off of a failed registration: the cluster stays CREATE_COMPLETE and
// the status polls retry, first after gitopsRetryMin, doubling up to
// gitopsRetryMax, so an Argo CD cluster that is down is not hammered.
const (
	gitopsRetryMin = 10 * time.Second
	gitopsRetryMax = 5 * time.Minute
)

// gitopsTimeout bounds each hand-off (read the kubeconfig, write or delete
// the Secret) inside the status poll or delete that makes it: an Argo CD
// cluster that hangs must not make Magnum's call time out, and a failure
// is retried anyway.
const gitopsTimeout = 5 * time.Second

// gitopsRefresh is how often a registered cluster's Secret is written
// again although nothing this sidecar saw changed: Cluster API renews the
// admin client certificate in the kubeconfig Secret on its own (months
// before it expires), which no status poll sees. Two requests per cluster
// a day.
const gitopsRefresh = 24 * time.Hour

// gitops is the hand-off's state: what this sidecar has written since it
// started (so a steady status poll makes no request) and when to retry
// what failed. A restart forgets it and writes each cluster's Secret once
// more, which server-side apply makes harmless.
type gitops struct {
	cfg   GitOps
	mu    sync.Mutex
	done  map[string]gitopsDone // stack_id -> what was written, when
	retry map[string]gitopsRetry
}

type gitopsDone struct {
	key string
	at  time.Time
	// op is Magnum's updated_at of the cluster when it was written: the
	// operation whose completion it reflects.
	op time.Time
}

// gitopsSameCompletion is how long after a write a poll showing the same
// completion again (Magnum has not saved the answer yet, or another
// conductor asks) is taken for the same one when Magnum sent no updated_at.
const gitopsSameCompletion = time.Minute

type gitopsRetry struct {
	at    time.Time
	delay time.Duration
}

func newGitOps(cfg *GitOps) *gitops {
	if cfg == nil {
		return nil
	}
	if cfg.Observe == nil {
		cfg.Observe = func(string, error) {}
	}
	return &gitops{cfg: *cfg, done: map[string]gitopsDone{}, retry: map[string]gitopsRetry{}}
}

// gitopsAbsent is the key of a cluster whose template turned the hand-off
// off: its Secret was deleted.
const gitopsAbsent = "absent"

// gitopsKey names the Magnum facts the Secret carries, so a change of them
// (a node group added, the template changed) writes it again. The
// credential and CA change only through operations that end in a
// transition, which writes it again anyway.
func gitopsKey(spec Spec) string {
	ngs := make([]string, 0, len(spec.NodeGroups))
	for _, ng := range spec.NodeGroups {
		ngs = append(ngs, ng.Name+"="+ng.Role)
	}
	sort.Strings(ngs)
	return strings.Join([]string{spec.Cluster.Name, spec.Template.UUID, spec.Template.Name, strings.Join(ngs, ",")}, "|")
}

// due says whether the cluster's Secret is to be written (key) now: not
// when this sidecar wrote the same within gitopsRefresh, nor while a
// failure backs off. A transition to complete (create, update, upgrade,
// CA rotation done) writes it again, once per operation (op: Magnum's
// updated_at, which the operation's start set): the credential may be new.
func (g *gitops) due(stackID, key string, transition bool, op, now time.Time) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	d, ok := g.done[stackID]
	if ok && transition && !d.sameCompletion(op, now) {
		ok = false
	}
	if ok && d.key == key && now.Sub(d.at) < gitopsRefresh {
		return false
	}
	r, backingOff := g.retry[stackID]
	return !backingOff || !now.Before(r.at)
}

// sameCompletion: the write reflects the operation that ended at op.
func (d gitopsDone) sameCompletion(op, now time.Time) bool {
	if op.IsZero() {
		return now.Sub(d.at) < gitopsSameCompletion
	}
	return d.op.Equal(op)
}

// record remembers a write's outcome; a failure backs off.
func (g *gitops) record(stackID, key string, err error, op, now time.Time) time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err == nil {
		g.done[stackID] = gitopsDone{key: key, at: now, op: op}
		delete(g.retry, stackID)
		return 0
	}
	delay := min(max(2*g.retry[stackID].delay, gitopsRetryMin), gitopsRetryMax)
	g.retry[stackID] = gitopsRetry{at: now.Add(delay), delay: delay}
	return delay
}

// forget drops what is known of a cluster: the next complete status
// writes its Secret again.
func (g *gitops) forget(stackID string) {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.done, stackID)
	delete(g.retry, stackID)
}

// usable: the statuses at which a cluster's API is up and its Secret is
// written (or removed, when its template turned the hand-off off).
func usable(status string) bool {
	return strings.HasSuffix(status, "_COMPLETE") && !strings.HasPrefix(status, "DELETE_")
}

// handOff keeps a complete cluster's Argo CD Secret as its template wants
// it. It never fails the status: the cluster is complete whatever Argo CD
// says; a failure is logged (and counted) and retried by a later poll.
func (s *Service) handOff(ctx context.Context, op *operation, spec Spec, res capistatus.Result) {
	g := s.gitops
	if g == nil || !usable(res.Status) {
		return
	}
	want := helmvalues.ArgoCDRegister(spec.Template.Labels, g.cfg.RegisterByDefault)
	key := gitopsAbsent
	if want {
		key = gitopsKey(spec)
	}
	stackID := spec.Cluster.StackID
	if !g.due(stackID, key, completion(spec.Cluster.Status, res.Status), spec.UpdatedAt, s.now()) {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, gitopsTimeout)
	defer cancel()
	action, err := "apply", error(nil)
	if want {
		err = s.registerGitOps(ctx, op)
	} else {
		action, err = "delete", s.unregisterGitOps(ctx, op)
	}
	g.cfg.Observe(action, err)
	if delay := g.record(stackID, key, err, spec.UpdatedAt, s.now()); err != nil {
		s.logger(ctx).WarnContext(ctx, "argo cd hand-off failed; the cluster is unaffected, retrying later",
			"stack_id", stackID, "action", action, "retry_in", delay.String(), "err", err)
		return
	}
	s.logger(ctx).InfoContext(ctx, "argo cd hand-off", "stack_id", stackID, "action", action,
		"secret", g.cfg.Namespace+"/"+gitopsSecretName(stackID))
}

// target is the client of the cluster Argo CD's Secrets go to.
func (g *gitops) target(op *operation) Secrets {
	if g.cfg.Target != nil {
		return g.cfg.Target
	}
	return op.mc.Kube
}

// registerGitOps writes the cluster's Argo CD Secret from the admin
// kubeconfig Cluster API issued. Idempotent: server-side apply of a
// Secret with a fixed name.
func (s *Service) registerGitOps(ctx context.Context, op *operation) error {
	acc, err := op.mc.Kube.WorkloadAccess(ctx, op.ns, op.stackID())
	if err != nil {
		return err
	}
	if acc == nil {
		return fmt.Errorf("the cluster's kubeconfig Secret %s/%s-kubeconfig does not exist yet", op.ns, op.stackID())
	}
	secret, err := argoCDSecret(op.spec, *acc, gitopsTarget{Namespace: s.gitops.cfg.Namespace, Project: s.gitops.cfg.Project})
	if err != nil {
		return err
	}
	return s.gitops.target(op).ApplySecret(ctx, secret)
}

// unregisterGitOps deletes the cluster's Argo CD Secret. Idempotent: a
// Secret already gone is done.
func (s *Service) unregisterGitOps(ctx context.Context, op *operation) error {
	return s.gitops.target(op).DeleteSecret(ctx, s.gitops.cfg.Namespace, gitopsSecretName(op.stackID()))
}

// removeFromGitOps is the delete's part: Argo CD stops deploying to the
// cluster as soon as its deletion starts. The Secret is removed again by
// the cleanup after Cluster API has deleted everything, which must
// succeed before DELETE_COMPLETE, so nothing leaks if this fails.
func (s *Service) removeFromGitOps(ctx context.Context, op *operation) error {
	if s.gitops == nil {
		return nil
	}
	s.gitops.forget(op.stackID())
	ctx, cancel := context.WithTimeout(ctx, gitopsTimeout)
	defer cancel()
	err := s.unregisterGitOps(ctx, op)
	s.gitops.cfg.Observe("delete", err)
	return err
}
