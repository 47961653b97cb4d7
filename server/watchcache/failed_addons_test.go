package watchcache

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
)

// addonVersion is one version of an addon as the watch delivers it.
type addonVersion struct {
	phase      string
	generation int64
	// writes are the managedFields entries' times, minutes after t0; a
	// negative value marks a status-subresource write.
	writes   []int
	deleting bool
	// at is when the cache sees this version, minutes after t0.
	at int
}

var t0 = time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)

func minutes(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }

func (v addonVersion) object(uid types.UID) *HelmRelease {
	u := &HelmRelease{}
	u.SetName("demo-cni-calico")
	u.SetUID(uid)
	u.SetGeneration(v.generation)
	u.Status.Phase = v.phase
	if v.deleting {
		now := metav1.NewTime(minutes(v.at))
		u.SetDeletionTimestamp(&now)
	}
	var fields []metav1.ManagedFieldsEntry
	for _, w := range v.writes {
		e := metav1.ManagedFieldsEntry{Manager: "helm", Operation: metav1.ManagedFieldsOperationApply}
		if w < 0 {
			w = -w
			e = metav1.ManagedFieldsEntry{Manager: "kopf", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status"}
		}
		tm := metav1.NewTime(minutes(w))
		e.Time = &tm
		fields = append(fields, e)
	}
	u.SetManagedFields(fields)
	return u
}

// TestFailedAddons: since when an addon counts as Failed, through the
// sequences of versions the provider and the sidecar produce.
func TestFailedAddons(t *testing.T) {
	for _, tc := range []struct {
		name     string
		versions []addonVersion
		// want is minutes after t0; -1: not tracked.
		want int
	}{
		{"failed: the status write that said so",
			[]addonVersion{{phase: "Failed", generation: 1, writes: []int{0, -3}, at: 5}}, 3},
		{"failed without managedFields: when first seen",
			[]addonVersion{{phase: "Failed", generation: 1, at: 5}}, 5},
		{"seen again later with a newer status write: the clock keeps running",
			[]addonVersion{
				{phase: "Failed", generation: 1, writes: []int{0, -3}, at: 4},
				{phase: "Failed", generation: 1, writes: []int{0, -8}, at: 9},
			}, 3},
		{"retrying the same spec (Installing in between): the clock keeps running",
			[]addonVersion{
				{phase: "Failed", generation: 1, writes: []int{0, -3}, at: 4},
				{phase: "Installing", generation: 1, writes: []int{0, -6}, at: 6},
				{phase: "Failed", generation: 1, writes: []int{0, -7}, at: 7},
			}, 3},
		{"deployed stops the clock",
			[]addonVersion{
				{phase: "Failed", generation: 1, writes: []int{0, -3}, at: 4},
				{phase: "Deployed", generation: 1, writes: []int{0, -6}, at: 6},
			}, -1},
		{"failed again after deployed: a new clock",
			[]addonVersion{
				{phase: "Failed", generation: 1, writes: []int{0, -3}, at: 4},
				{phase: "Deployed", generation: 1, writes: []int{0, -6}, at: 6},
				{phase: "Failed", generation: 1, writes: []int{0, -20}, at: 21},
			}, 20},
		{"spec changed, provider not yet retried: from the spec change, not the old failure",
			[]addonVersion{
				{phase: "Failed", generation: 1, writes: []int{0, -3}, at: 4},
				{phase: "Failed", generation: 2, writes: []int{30, -3}, at: 31},
			}, 30},
		{"first seen after a sidecar restart with a changed spec: the newest write",
			[]addonVersion{{phase: "Failed", generation: 2, writes: []int{30, -3}, at: 40}}, 30},
		{"being deleted: not (newly) tracked",
			[]addonVersion{{phase: "Failed", generation: 1, writes: []int{0, -3}, deleting: true, at: 5}}, -1},
		{"never failed", []addonVersion{{phase: "Installing", generation: 1, writes: []int{0}, at: 1}}, -1},
		{"no phase", []addonVersion{{generation: 1, at: 1}}, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var now time.Time
			f := newFailedAddons(func() time.Time { return now })
			for _, v := range tc.versions {
				now = minutes(v.at)
				f.observe(&v.object("uid-1").AddonObject)
			}
			got := f.get("uid-1")
			switch {
			case tc.want < 0 && !got.IsZero():
				t.Errorf("failed since %s, want not tracked", got)
			case tc.want >= 0 && !got.Equal(minutes(tc.want)):
				t.Errorf("failed since %s, want %s", got, minutes(tc.want))
			}
		})
	}
}

// TestFailedAddonsForget: a deleted addon is forgotten, tombstone or not,
// and the transform strips managedFields after recording.
func TestFailedAddonsForget(t *testing.T) {
	now := minutes(1)
	f := newFailedAddons(func() time.Time { return now })
	strip := func(in any) (any, error) {
		in.(*HelmRelease).SetManagedFields(nil)
		return in, nil
	}
	tr := f.transform(strip)
	for _, uid := range []types.UID{"a", "b"} {
		obj := addonVersion{phase: "Failed", generation: 1, writes: []int{-1}}.object(uid)
		out, err := tr(obj)
		if err != nil {
			t.Fatal(err)
		}
		if mf := out.(*HelmRelease).GetManagedFields(); len(mf) != 0 {
			t.Errorf("managedFields kept after the transform: %v", mf)
		}
	}
	if f.len() != 2 {
		t.Fatalf("tracked %d addons, want 2", f.len())
	}
	f.forget(addonVersion{}.object("a"))
	f.forget(toolscache.DeletedFinalStateUnknown{Key: "ns/b", Obj: addonVersion{}.object("b")})
	f.forget("not an object")
	if f.len() != 0 {
		t.Errorf("tracked %d addons after both were deleted, want 0", f.len())
	}
}
