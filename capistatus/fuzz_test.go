package capistatus

import (
	"sort"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// FuzzSnapshotAndDerive feeds arbitrary object lists through
// SnapshotFromObjects, Derive and DeriveHealth: whatever the objects hold,
// nothing may panic, and every result must be a status Magnum knows (or the
// one it was asked about).
func FuzzSnapshotAndDerive(f *testing.F) {
	for _, seed := range []string{yCluster, yInfra, yKCP, yMD, yMachines, yAddons, yOthers,
		strings.Join([]string{yCluster, yInfra, yKCP, yMD, yMachines, yAddons}, "\n---\n")} {
		f.Add([]byte(seed), uint8(0), int64(0))
	}
	f.Add([]byte(`{"apiVersion":"cluster.x-k8s.io/v1beta1","kind":"Cluster","metadata":{"name":"demo-k7qzbfr2xwa4"},"status":{"conditions":[{"type":"Ready"}]}}`), uint8(3), int64(-1))
	f.Add([]byte(`{"apiVersion":"controlplane.cluster.x-k8s.io/v1beta2","kind":"KubeadmControlPlane","metadata":{"name":"demo-k7qzbfr2xwa4-control-plane","generation":9223372036854775807},"spec":{"replicas":2147483647}}`), uint8(1), int64(1<<40))
	statuses := append(append([]string(nil), KnownStatuses...), "", "GARBAGE")
	f.Fuzz(func(t *testing.T, data []byte, which uint8, offset int64) {
		var objs []*unstructured.Unstructured
		for _, doc := range strings.Split(string(data), "\n---\n") {
			js, err := yaml.YAMLToJSON([]byte(doc))
			if err != nil {
				continue
			}
			obj, _, err := unstructured.UnstructuredJSONScheme.Decode(js, nil, nil)
			if err != nil {
				continue
			}
			if u, ok := obj.(*unstructured.Unstructured); ok {
				objs = append(objs, u)
			}
		}
		snap, _ := SnapshotFromObjects(demo, objs) // a partial snapshot must be usable too
		status := statuses[int(which)%len(statuses)]
		req := Request{
			Status: status, StackID: demo, Now: t0, OperationStarted: t0.Add(time.Duration(offset)),
			ReleaseExists: which%2 == 0, CreateTimeout: time.Duration(offset),
			NodeGroups: []NodeGroup{
				{Name: "default-master", Role: "master", Status: status, IsDefault: true},
				{Name: "default-worker", Role: "worker", Status: status, ChartName: "default-worker", NodeCount: 2},
				{Name: "gone", Role: "worker", Status: DeleteInProgress},
			},
		}
		res := Derive(req, snap, Config{})
		if res.Status != status && !IsKnownStatus(res.Status) {
			t.Fatalf("Derive(%q) = unknown status %q", status, res.Status)
		}
		if len(res.NodeGroups) != len(req.NodeGroups) {
			t.Fatalf("%d node group results for %d node groups", len(res.NodeGroups), len(req.NodeGroups))
		}
		if n := len([]rune(res.StatusReason)); n > maxReasonLen+len("timed out after 9999 minutes waiting for deletion of: ") && drives(status) {
			t.Fatalf("status_reason of %d runes", n)
		}
		h := DeriveHealth(req, snap)
		if h.Status != Healthy && h.Status != Unhealthy && h.Status != Unknown {
			t.Fatalf("health status %q", h.Status)
		}
	})
}

// FuzzFieldValues takes a valid cluster's objects and replaces one field
// (chosen by index among every field of every object) with a fuzzed JSON
// value: wrong types, nulls, negative or huge numbers, deep structures. Byte
// mutation of YAML rarely gets this far; this target always does.
func FuzzFieldValues(f *testing.F) {
	docs := strings.Join([]string{yCluster, yInfra, yKCP, yMD, yMachines, yAddons}, "\n---\n")
	for i, v := range []string{`"x"`, `-1`, `null`, `{"a":[1,{}]}`, `9223372036854775807`, `[]`, `true`, `1.5`, `"2026-13-45T99:00:00Z"`} {
		f.Add(uint16(i*7), []byte(v), uint8(i))
	}
	statuses := append(append([]string(nil), KnownStatuses...), "")
	f.Fuzz(func(t *testing.T, field uint16, value []byte, which uint8) {
		var objs []*unstructured.Unstructured
		var slots []func(any)
		for _, doc := range strings.Split(docs, "\n---\n") {
			var m map[string]any
			if err := yaml.Unmarshal([]byte(doc), &m); err != nil || m == nil {
				t.Fatalf("seed: %v", err)
			}
			slots = append(slots, fieldSlots(m)...)
			objs = append(objs, &unstructured.Unstructured{Object: m})
		}
		var v any = string(value)
		if err := yaml.Unmarshal(value, &v); err != nil {
			v = string(value)
		}
		slots[int(field)%len(slots)](v)
		snap, _ := SnapshotFromObjects(demo, objs)
		status := statuses[int(which)%len(statuses)]
		req := Request{Status: status, StackID: demo, Now: t0, OperationStarted: started, ReleaseExists: true,
			NodeGroups: []NodeGroup{{Name: "default-master", Role: "master", Status: status}, {Name: "default-worker", Role: "worker", Status: status, ChartName: "default-worker"}}}
		res := Derive(req, snap, Config{})
		if res.Status != status && !IsKnownStatus(res.Status) {
			t.Fatalf("unknown status %q", res.Status)
		}
		DeriveHealth(req, snap)
	})
}

// fieldSlots returns a setter for every value inside m (map entries and list
// items, at any depth).
func fieldSlots(m map[string]any) []func(any) {
	var out []func(any)
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys) // the same field for the same input, so failures reproduce
			for _, k := range keys {
				child := x[k]
				out = append(out, func(nv any) { x[k] = nv })
				walk(child)
			}
		case []any:
			for i, child := range x {
				out = append(out, func(nv any) { x[i] = nv })
				walk(child)
			}
		}
	}
	walk(m)
	return out
}
