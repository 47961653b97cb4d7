package release

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
)

// TestHistoryReads: a LIST is answered from the action's last one when
// that one asked for no less, filtered by the new selector; a broader one,
// or any after a write, goes to the API server (here client-go's fake
// clientset, which records what reaches it).
func TestHistoryReads(t *testing.T) {
	record := func(name, status string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns",
			Labels: map[string]string{"owner": "helm", "name": "demo", "status": status}}}
	}
	history := "name=demo,owner=helm"
	tests := []struct {
		name string
		// steps are LISTs by selector, "write" for a record's update, or
		// the next action of the operation: "next" shares the History,
		// "alone" does not.
		steps []string
		// want is, per LIST step, the records it returns.
		want [][]string
		// listed is how many LISTs reached the server.
		listed int
	}{
		{"the same history twice", []string{history, history},
			[][]string{{"v1", "v2"}, {"v1", "v2"}}, 1},
		{"the deployed revision from the history", []string{history, "name=demo,owner=helm,status=deployed"},
			[][]string{{"v1", "v2"}, {"v2"}}, 1},
		{"a broader read asks the server", []string{"name=demo,owner=helm,status=deployed", history},
			[][]string{{"v2"}, {"v1", "v2"}}, 2},
		{"after a write the server again", []string{history, "write", history},
			[][]string{{"v1", "v2"}, {"v1", "v2"}}, 2},
		{"an operation's next action reads from its first", []string{history, "next", history},
			[][]string{{"v1", "v2"}, {"v1", "v2"}}, 1},
		{"an action that wrote makes the next one read", []string{history, "write", "next", history},
			[][]string{{"v1", "v2"}, {"v1", "v2"}}, 2},
		{"an action with a History of its own reads", []string{history, "alone", history},
			[][]string{{"v1", "v2"}, {"v1", "v2"}}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clients := fake.NewClientset(record("v1", "superseded"), record("v2", "deployed"))
			h := &historyReads{SecretInterface: clients.CoreV1().Secrets("ns"), History: new(History)}
			var got [][]string
			for _, step := range tt.steps {
				switch step {
				case "next":
					h = &historyReads{SecretInterface: clients.CoreV1().Secrets("ns"), History: h.History}
					continue
				case "alone":
					h = &historyReads{SecretInterface: clients.CoreV1().Secrets("ns"), History: new(History)}
					continue
				case "write":
					if _, err := h.Update(context.Background(), record("v2", "deployed"), metav1.UpdateOptions{}); err != nil {
						t.Fatal(err)
					}
					continue
				}
				list, err := h.List(context.Background(), metav1.ListOptions{LabelSelector: step})
				if err != nil {
					t.Fatal(err)
				}
				var names []string
				for _, s := range list.Items {
					names = append(names, s.Name)
				}
				slices.Sort(names)
				got = append(got, names)
			}
			if !slices.EqualFunc(got, tt.want, slices.Equal) {
				t.Errorf("answers %v, want %v", got, tt.want)
			}
			listed := 0
			for _, a := range clients.Actions() {
				if a.GetVerb() == "list" {
					listed++
				}
			}
			if listed != tt.listed {
				t.Errorf("%d LISTs reached the server, want %d", listed, tt.listed)
			}
		})
	}
}

// TestHistorySupersedesAhead: during an upgrade the write marking the
// previous revision superseded does not hold up the next write, settle
// waits for it and gives its error, and outside an upgrade every write is
// waited for.
func TestHistorySupersedesAhead(t *testing.T) {
	record := func(name, status string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns",
			Labels: map[string]string{"owner": "helm", "name": "demo", "status": status, "version": strings.TrimPrefix(name, "v")}}}
	}
	for _, tt := range []struct {
		name      string
		upgrading bool
		refuse    bool
	}{
		{"an upgrade", true, false},
		{"an upgrade whose first write is refused", true, true},
		{"not an upgrade", false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			clients := fake.NewClientset(record("v1", "deployed"), record("v2", "pending-upgrade"))
			release := make(chan struct{})
			var superseded atomic.Bool
			// The hold sits in front of the fake clientset, not in one of
			// its reactors: the fake runs reactors under its own lock, so a
			// reactor held would hold up every other call as well.
			held := &holdSuperseded{SecretInterface: clients.CoreV1().Secrets("ns"), t: t,
				hold: tt.upgrading, refuse: tt.refuse, release: release, superseded: &superseded}
			h := &historyReads{SecretInterface: held, History: new(History)}
			h.upgrading(tt.upgrading)
			ctx := context.Background()
			if _, err := h.Update(ctx, record("v1", "superseded"), metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			if !tt.upgrading && !superseded.Load() {
				t.Error("outside an upgrade, Update returned before its write was made")
			}
			if _, err := h.Update(ctx, record("v2", "deployed"), metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			h.upgrading(false)
			close(release)
			err := h.settle()
			if !superseded.Load() {
				t.Error("settle returned before the write sent ahead was made")
			}
			if tt.refuse != (err != nil) {
				t.Errorf("settle: %v, want an error: %v", err, tt.refuse)
			}
			if err != nil && !strings.Contains(err.Error(), "revision 1 of release demo superseded") {
				t.Errorf("settle's error %q does not name the revision", err)
			}
			list, err := h.List(ctx, metav1.ListOptions{LabelSelector: "name=demo,owner=helm"})
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range list.Items {
				want := map[string]string{"v1": "superseded", "v2": "deployed"}[s.Name]
				if tt.refuse && s.Name == "v1" {
					want = "deployed"
				}
				if s.Labels["status"] != want {
					t.Errorf("%s is %s, want %s", s.Name, s.Labels["status"], want)
				}
			}
		})
	}
}

// holdSuperseded holds a write marking a record superseded, when hold is
// set, until release is closed or 10 s have passed (an error then), records
// in superseded that the write was made, and refuses it, when refuse is
// set, as an API server whose etcd timed out does.
type holdSuperseded struct {
	typedcorev1.SecretInterface
	t            *testing.T
	hold, refuse bool
	release      <-chan struct{}
	superseded   *atomic.Bool
}

func (h *holdSuperseded) Update(ctx context.Context, s *corev1.Secret, opts metav1.UpdateOptions) (*corev1.Secret, error) {
	if s.Labels["status"] != "superseded" {
		return h.SecretInterface.Update(ctx, s, opts)
	}
	if h.hold {
		select { // held until the next write has been made
		case <-h.release:
		case <-time.After(10 * time.Second):
			h.t.Error("the write marking v1 superseded held up the next write")
		}
	}
	defer h.superseded.Store(true)
	if h.refuse {
		return nil, errors.New("etcdserver: request timed out")
	}
	return h.SecretInterface.Update(ctx, s, opts)
}
