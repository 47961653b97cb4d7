package release

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
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
		// steps are LISTs by selector, or "write" for a record's update.
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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clients := fake.NewClientset(record("v1", "superseded"), record("v2", "deployed"))
			h := &historyReads{SecretInterface: clients.CoreV1().Secrets("ns")}
			var got [][]string
			for _, step := range tt.steps {
				if step == "write" {
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
