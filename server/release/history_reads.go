package release

import (
	"context"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
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

// historyReads is the release Secrets' client of one action.
type historyReads struct {
	corev1client.SecretInterface
	mu sync.Mutex
	// listed is the action's last LIST since its last write, and the
	// requirements of its selector; nil when there is none.
	listed   *corev1.SecretList
	required labels.Requirements
}

// List answers from the last LIST when its selector asked for no less
// than this one does; otherwise it asks the API server and keeps the
// answer.
func (h *historyReads) List(ctx context.Context, opts metav1.ListOptions) (*corev1.SecretList, error) {
	sel, err := labels.Parse(opts.LabelSelector)
	plain := err == nil && opts.FieldSelector == "" && opts.ResourceVersion == "" && opts.Limit == 0 && opts.Continue == ""
	if plain {
		if answer := h.fromLast(sel); answer != nil {
			return answer, nil
		}
	}
	list, err := h.SecretInterface.List(ctx, opts)
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
func (h *historyReads) fromLast(sel labels.Selector) *corev1.SecretList {
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
func (h *historyReads) wrote() {
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
