package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/magnum-capi/magnum-capi/capistatus"
	"github.com/magnum-capi/magnum-capi/helmvalues"
	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
	"github.com/magnum-capi/magnum-capi/server/kube"
	"github.com/magnum-capi/magnum-capi/server/watchcache"
	"github.com/magnum-capi/magnum-capi/test/harness"
	"github.com/magnum-capi/magnum-capi/test/testbed"
)

// Recording snapshots of the real Cluster API controllers for capistatus:
// with MAGNUM_CAPI_RECORD_STATUS=1 each checkpoint of the status tests
// writes capistatus/testdata/capi-v1.13/<name>/ (objects.yaml as the
// sidecar's watch cache reads them, request.json with Magnum's side and the
// docs/status.md rows the checkpoint verifies); capistatus's
// TestRecordedSnapshots replays them. Without the variable the checkpoints
// still check that capistatus, run on the objects read there and then,
// answers what the sidecar answered.

const recordEnv = "MAGNUM_CAPI_RECORD_STATUS"

// checkpoint polls the sidecar until its answer for c, and capistatus's for
// the objects read right after, agree (the controllers may move between the
// two reads), records the objects when asked to, writes the answer back to
// c as the shim would and returns it.
// started is when the current operation began (zero: unknown).
func checkpoint(t *testing.T, c *cluster, name string, started time.Time, rows ...string) *pb.ClusterStatus {
	t.Helper()
	ns := "magnum-" + strings.ReplaceAll(stack.Info.Project.ID, "-", "")
	mc, err := kube.Connect("e2e-record", stack.Env.Config)
	if err != nil {
		t.Fatal(err)
	}
	var lastDiff string
	for attempt := 0; attempt < 20; attempt++ {
		asked := recordedRequestFor(c, started)
		ctx, cancel := callCtx()
		resp, err := c.client().GetClusterStatus(ctx, &pb.GetClusterStatusRequest{Spec: c.spec})
		if err != nil {
			cancel()
			t.Fatalf("GetClusterStatus: %v", err)
		}
		objs, err := watchcache.ReadLive(ctx, mc.Client, ns, c.spec.Cluster.StackId)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		asked.Now = time.Now()
		asked.ReleaseExists = releaseExists(objs, c.spec.Cluster.StackId)
		got := replay(t, asked, objs)
		if lastDiff = differs(resp.GetStatus(), got); lastDiff == "" {
			t.Logf("checkpoint %s: %s %q", name, resp.GetStatus().GetStatus(), resp.GetStatus().GetStatusReason())
			if os.Getenv(recordEnv) != "" {
				asked.Rows = rows
				writeRecording(t, name, asked, objs)
			}
			c.apply(resp.GetStatus())
			return resp.GetStatus()
		}
		time.Sleep(300 * time.Millisecond)
	}
	t.Fatalf("checkpoint %s: capistatus on the objects read never agreed with the sidecar: %s", name, lastDiff)
	return nil
}

// recordedRequestFor is what the sidecar asks capistatus for c
// (server/clusters/status.go statusRequest).
func recordedRequestFor(c *cluster, started time.Time) capistatus.Recording {
	req := capistatus.Recording{
		Status: c.spec.Cluster.Status, StackID: c.spec.Cluster.StackId, OperationStarted: started,
		CreateTimeout:     capistatus.Duration{Duration: time.Duration(c.spec.Cluster.CreateTimeout) * time.Minute},
		CurrentAPIAddress: c.spec.Cluster.ApiAddress, CurrentCOEVersion: c.spec.Cluster.CoeVersion,
	}
	for _, ng := range c.spec.Nodegroups {
		req.NodeGroups = append(req.NodeGroups, capistatus.NodeGroup{
			UUID: ng.Uuid, Name: ng.Name, Role: ng.Role, Status: ng.Status, StatusReason: ng.StatusReason,
			IsDefault: ng.IsDefault, NodeCount: int(ng.NodeCount), ChartName: helmvalues.NodeGroupName(c.spec.Cluster.StackId, ng.Name),
		})
	}
	return req
}

func releaseExists(objs []*unstructured.Unstructured, stackID string) bool {
	for _, o := range objs {
		if o.GetKind() == "Secret" && o.GetLabels()["name"] == stackID {
			return true
		}
	}
	return false
}

// replay is capistatus's answer for the request and objects.
func replay(t *testing.T, req capistatus.Recording, objs []*unstructured.Unstructured) capistatus.Result {
	t.Helper()
	snap, err := capistatus.SnapshotFromObjects(req.StackID, objs)
	if err != nil {
		t.Fatalf("SnapshotFromObjects: %v", err)
	}
	return capistatus.Derive(req.Request(), snap, capistatus.DefaultConfig())
}

// differs says how the sidecar's answer and capistatus's differ ("": not).
func differs(s *pb.ClusterStatus, r capistatus.Result) string {
	if s.GetStatus() != r.Status || s.GetStatusReason() != r.StatusReason {
		return fmt.Sprintf("sidecar %s %q, capistatus %s %q", s.GetStatus(), s.GetStatusReason(), r.Status, r.StatusReason)
	}
	for _, ng := range r.NodeGroups {
		for _, sng := range s.GetNodegroups() {
			if sng.GetUuid() == ng.UUID && (sng.GetStatus() != ng.Status || sng.GetStatusReason() != ng.StatusReason ||
				int(sng.GetNodeCount()) != ng.NodeCount || strings.Join(sng.GetNodeAddresses(), ",") != strings.Join(ng.NodeAddresses, ",")) {
				return fmt.Sprintf("node group %s: sidecar %s %q %d %v, capistatus %s %q %d %v", ng.Name,
					sng.GetStatus(), sng.GetStatusReason(), sng.GetNodeCount(), sng.GetNodeAddresses(),
					ng.Status, ng.StatusReason, ng.NodeCount, ng.NodeAddresses)
			}
		}
	}
	return ""
}

// writeRecording writes one recorded snapshot. Managed fields and the
// addons' values and manifest sources are left out to keep the files
// small: capistatus reads neither (the sidecar's cache drops managed fields
// too).
func writeRecording(t *testing.T, name string, req capistatus.Recording, objs []*unstructured.Unstructured) {
	t.Helper()
	dir := filepath.Join(testbed.RepoRoot(), "capistatus", "testdata", "capi-v1.13", name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	for _, o := range objs {
		o = o.DeepCopy()
		o.SetManagedFields(nil)
		unstructured.RemoveNestedField(o.Object, "spec", "valuesSources")
		unstructured.RemoveNestedField(o.Object, "spec", "manifestSources")
		b, err := yaml.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		buf.WriteString("---\n")
		buf.Write(b)
	}
	if err := os.WriteFile(filepath.Join(dir, "objects.yaml"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := json.MarshalIndent(req, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "request.json"), append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("recorded %s", dir)
}

// waitUntil polls the sidecar for c until ok holds, writing answers back,
// and fails after timeout.
func (c *cluster) waitUntil(t *testing.T, what string, timeout time.Duration, ok func(*pb.ClusterStatus) bool) *pb.ClusterStatus {
	t.Helper()
	timeout = harness.Patience(timeout)
	deadline := time.Now().Add(timeout)
	var last *pb.ClusterStatus
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		resp, err := c.client().GetClusterStatus(ctx, &pb.GetClusterStatusRequest{Spec: c.spec})
		cancel()
		if err != nil {
			t.Fatalf("GetClusterStatus: %v", err)
		}
		last = resp.GetStatus()
		if ok(last) {
			return last
		}
		c.apply(last)
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s: not after %s; last %s (%s)", what, timeout, last.GetStatus(), last.GetStatusReason())
	return nil
}
