package release

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	helmrelease "helm.sh/helm/v3/pkg/release"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/magnum-capi/magnum-capi/server/panics"
)

// One action reads a release's history several times before it writes:
// Deploy reads it to choose between install and upgrade (manager.go), then
// Helm's install reads it again to check the name is free, and Helm's
// upgrade reads it for the last revision and once more for the deployed
// one (a narrower selector). Each read is a LIST of the release's Secrets —
// every revision, each holding the whole manifest. historyReads answers
// those later reads from the action's first one, filtered by their own
// selector, until the action writes a release record; after a write the
// next read goes to the API server. Nobody else writes the release
// meanwhile: the caller holds the cluster's lock (Deploy's contract).
//
// An operation that holds the lock across several actions — it reads the
// deployed release (Get) and then deploys — shares one History between
// them (Target.History): Deploy's first read is then answered from Get's.

// History is what the actions of one operation on a release have read of
// its history: their last LIST since their last write of a release
// record. Share one only while holding the cluster's lock, so that the
// only writes of the release are those actions' own. The zero value is
// ready to use.
type History struct {
	mu sync.Mutex
	// listed is the last LIST since the last write, and the requirements
	// of its selector; nil when there is none.
	listed   *corev1.SecretList
	required labels.Requirements
	// supersedeAhead: the action is an upgrade, whose write marking the
	// previous revision superseded is sent without waiting for it
	// (historyReads.Update); ahead counts those writes in flight, aheadErr
	// holds their errors until settle.
	supersedeAhead bool
	ahead          sync.WaitGroup
	aheadErr       error
}

// A successful upgrade ends with two writes of release records, one round
// trip after the other: Helm marks the previous revision superseded (an
// error there it only logs: recordRelease) and then the new one deployed.
// During an upgrade the first is sent without waiting, so that the second
// goes out beside it; settle, at the end of the upgrade, waits for it and
// gives its error for the log, as Helm would have logged it. A read of the
// history waits for it first.

// upgrading marks the start (true) or end (false) of an upgrade.
func (h *History) upgrading(on bool) {
	h.mu.Lock()
	h.supersedeAhead = on
	h.mu.Unlock()
}

// settle waits for the writes sent ahead and returns their errors.
func (h *History) settle() error {
	h.ahead.Wait()
	h.mu.Lock()
	defer h.mu.Unlock()
	err := h.aheadErr
	h.aheadErr = nil
	return err
}

// historyReads is the release Secrets' client of one action.
type historyReads struct {
	corev1client.SecretInterface
	*History
	// reads is the caller's context for reads of the history; nil: the
	// one Helm passes. Helm's Secrets driver passes context.Background()
	// to every request, so without it a read from a hung API server would
	// outlast the caller's deadline, up to the client's request timeout.
	// Writes keep Helm's: a record write runs to its end (runs.go).
	reads context.Context
}

// readContext is the context a read of the history runs with.
func (h *historyReads) readContext(helms context.Context) context.Context {
	if h.reads != nil {
		return h.reads
	}
	return helms
}

// Get reads one release record with the caller's context.
func (h *historyReads) Get(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.Secret, error) {
	return h.SecretInterface.Get(h.readContext(ctx), name, opts)
}

// List answers from the last LIST when its selector asked for no less
// than this one does; otherwise it asks the API server and keeps the
// answer.
func (h *historyReads) List(ctx context.Context, opts metav1.ListOptions) (*corev1.SecretList, error) {
	h.ahead.Wait()
	sel, err := labels.Parse(opts.LabelSelector)
	plain := err == nil && opts.FieldSelector == "" && opts.ResourceVersion == "" && opts.Limit == 0 && opts.Continue == ""
	if plain {
		if answer := h.fromLast(sel); answer != nil {
			return answer, nil
		}
	}
	list, err := h.SecretInterface.List(h.readContext(ctx), opts)
	if err == nil && plain {
		required, _ := sel.Requirements()
		h.mu.Lock()
		h.listed, h.required = list.DeepCopy(), required
		h.mu.Unlock()
	}
	return list, err
}

// fromLast is the last LIST's Secrets that sel selects, copied, or nil
// when that LIST may have missed some of them.
func (h *History) fromLast(sel labels.Selector) *corev1.SecretList {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.listed == nil {
		return nil
	}
	required, _ := sel.Requirements()
	for _, r := range h.required {
		if !slices.ContainsFunc(required, func(q labels.Requirement) bool { return q.Equal(r) }) {
			return nil
		}
	}
	out := &corev1.SecretList{ListMeta: *h.listed.ListMeta.DeepCopy()}
	for _, s := range h.listed.Items {
		if sel.Matches(labels.Set(s.Labels)) {
			out.Items = append(out.Items, *s.DeepCopy())
		}
	}
	return out
}

// wrote forgets the last LIST: the history changes (before the write and
// after it, as a write refused may still have been applied).
func (h *History) wrote() {
	h.mu.Lock()
	h.listed, h.required = nil, nil
	h.mu.Unlock()
}

func (h *historyReads) Create(ctx context.Context, s *corev1.Secret, opts metav1.CreateOptions) (*corev1.Secret, error) {
	h.wrote()
	defer h.wrote()
	return h.SecretInterface.Create(ctx, s, opts)
}

func (h *historyReads) Update(ctx context.Context, s *corev1.Secret, opts metav1.UpdateOptions) (*corev1.Secret, error) {
	h.wrote()
	h.mu.Lock()
	ahead := h.supersedeAhead && s.Labels["status"] == helmrelease.StatusSuperseded.String()
	if ahead {
		h.ahead.Add(1)
	}
	h.mu.Unlock()
	if ahead {
		go func() {
			defer h.ahead.Done()
			defer h.wrote()
			err := panics.Run(ctx, nil, "release/supersede", func() error {
				_, err := h.SecretInterface.Update(ctx, s, opts)
				return err
			})
			if err != nil {
				h.mu.Lock()
				h.aheadErr = errors.Join(h.aheadErr, fmt.Errorf("marking revision %s of release %s superseded: %w", s.Labels["version"], s.Labels["name"], err))
				h.mu.Unlock()
			}
		}()
		// Helm's Secrets driver reads only the error.
		return s, nil
	}
	defer h.wrote()
	return h.SecretInterface.Update(ctx, s, opts)
}

func (h *historyReads) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	h.wrote()
	defer h.wrote()
	return h.SecretInterface.Delete(ctx, name, opts)
}

func (h *historyReads) DeleteCollection(ctx context.Context, opts metav1.DeleteOptions, list metav1.ListOptions) error {
	h.wrote()
	defer h.wrote()
	return h.SecretInterface.DeleteCollection(ctx, opts, list)
}

func (h *historyReads) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, sub ...string) (*corev1.Secret, error) {
	h.wrote()
	defer h.wrote()
	return h.SecretInterface.Patch(ctx, name, pt, data, opts, sub...)
}
