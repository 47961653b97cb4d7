package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
	"github.com/magnum-capi/magnum-capi/test/realcapi"
)

// TestStatusLiveMatchesSidecar: `magnum-capi status --cluster` reads the
// management cluster once, without a cache, and must say what the sidecar
// says from its watch cache: for a complete cluster, and for one CAPO cannot
// finish because OpenStack refuses the load balancer for quota.
func TestStatusLiveMatchesSidecar(t *testing.T) {
	bin := sidecarBinary(t)

	t.Run("complete", func(t *testing.T) {
		c := completeCluster(t)
		asked := proto.Clone(c.spec).(*pb.ClusterSpec)
		asked.Cluster.Status = "CREATE_IN_PROGRESS"
		for _, ng := range asked.Nodegroups {
			ng.Status = "CREATE_IN_PROGRESS"
		}
		got, want := liveAndSidecar(t, bin, asked)
		if want.Status != "CREATE_COMPLETE" || want.HealthStatus != "HEALTHY" {
			t.Fatalf("the sidecar says %s / %s: the test shows nothing", want.Status, want.HealthStatus)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("live:\n%s\nsidecar:\n%s", asJSON(got), asJSON(want))
		}
	})

	t.Run("quota", func(t *testing.T) {
		if err := stack.Faults.Set(context.Background(), t.Name(), realcapi.FaultRule{Cluster: "live-quota-*", InfraFailure: realcapi.OctaviaQuota}); err != nil {
			t.Fatal(err)
		}
		c := newCluster(t, "live-quota", "v1.33.2", 1)
		ctx, cancel := callCtx()
		created, err := driver.CreateCluster(ctx, &pb.CreateClusterRequest{Context: c.ctx, Spec: c.spec, Certificates: c.certs})
		cancel()
		if err != nil {
			t.Fatalf("CreateCluster: %v", err)
		}
		c.spec.Cluster.StackId = created.GetStackId()
		t.Cleanup(func() {
			if err := stack.Faults.Set(context.Background(), t.Name()); err != nil {
				t.Error(err)
			}
			deleteCluster(t, driver, c)
		})
		deadline := time.Now().Add(2 * time.Minute)
		for !strings.Contains(c.spec.Cluster.StatusReason, "Quota has been met") {
			if time.Now().After(deadline) {
				t.Fatalf("no quota error after 2 minutes: %s (%s)", c.spec.Cluster.Status, c.spec.Cluster.StatusReason)
			}
			ctx, cancel := callCtx()
			resp, err := driver.GetClusterStatus(ctx, &pb.GetClusterStatusRequest{Spec: c.spec})
			cancel()
			if err != nil {
				t.Fatal(err)
			}
			c.apply(resp.GetStatus())
			time.Sleep(100 * time.Millisecond)
		}
		// The test bed's OpenStack provider keeps writing the OpenStackCluster's conditions:
		// the two reads may straddle a write, so agree once of a few tries.
		var got, want liveStatus
		for range 10 {
			if got, want = liveAndSidecar(t, bin, c.spec); reflect.DeepEqual(got, want) {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("live:\n%s\nsidecar:\n%s", asJSON(got), asJSON(want))
		}
		if want.Status != "CREATE_IN_PROGRESS" || !strings.Contains(want.StatusReason, "Quota has been met for resources: Load Balancer") {
			t.Errorf("sidecar: %s (%s), want CREATE_IN_PROGRESS quoting Octavia", want.Status, want.StatusReason)
		}
	})
}

// liveStatus is the JSON `magnum-capi status` prints.
type liveStatus struct {
	Status             string            `json:"status"`
	StatusReason       string            `json:"status_reason"`
	APIAddress         string            `json:"api_address"`
	COEVersion         string            `json:"coe_version"`
	HealthStatus       string            `json:"health_status"`
	HealthStatusReason map[string]string `json:"health_status_reason"`
	NodeGroups         []liveNodeGroup   `json:"nodegroups"`
}

type liveNodeGroup struct {
	Name          string   `json:"name"`
	Status        string   `json:"status"`
	StatusReason  string   `json:"status_reason"`
	NodeCount     int      `json:"node_count"`
	NodeAddresses []string `json:"node_addresses"`
}

// liveAndSidecar asks the command (live mode, against the test bed) and the
// shared sidecar about the cluster as spec describes it, at the same moment.
func liveAndSidecar(t *testing.T, bin string, spec *pb.ClusterSpec) (live, sidecar liveStatus) {
	t.Helper()
	type ng struct {
		UUID         string `json:"uuid"`
		Name         string `json:"name"`
		Role         string `json:"role"`
		Status       string `json:"status"`
		StatusReason string `json:"status_reason"`
		IsDefault    bool   `json:"is_default"`
		NodeCount    int    `json:"node_count"`
	}
	var groups []ng
	for _, g := range spec.Nodegroups {
		groups = append(groups, ng{g.Uuid, g.Name, g.Role, g.Status, g.StatusReason, g.IsDefault, int(g.NodeCount)})
	}
	raw, err := json.Marshal(groups)
	if err != nil {
		t.Fatal(err)
	}
	ngFile := filepath.Join(t.TempDir(), "nodegroups.json")
	if err := os.WriteFile(ngFile, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	ns := "magnum-" + strings.ReplaceAll(strings.ToLower(spec.Cluster.ProjectId), "-", "")
	cmd := exec.Command(bin, "status", "--cluster", spec.Cluster.StackId, "--namespace", ns,
		"--kubeconfig", stack.Info.Kubeconfig, "--magnum-status", spec.Cluster.Status,
		"--created-at", spec.Cluster.CreatedAt, "--timeout-minutes", strconv.Itoa(int(spec.Cluster.CreateTimeout)),
		"--nodegroups", ngFile)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %v\n%s", cmd.Args, err, stderr.String())
	}
	if err := json.Unmarshal(stdout.Bytes(), &live); err != nil {
		t.Fatalf("%v\n%s", err, stdout.String())
	}

	ctx, cancel := callCtx()
	defer cancel()
	st, err := driver.GetClusterStatus(ctx, &pb.GetClusterStatusRequest{Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	h, err := driver.GetClusterHealth(ctx, &pb.GetClusterHealthRequest{Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	s := st.GetStatus()
	sidecar = liveStatus{Status: s.GetStatus(), StatusReason: s.GetStatusReason(), APIAddress: s.GetApiAddress(), COEVersion: s.GetCoeVersion(),
		HealthStatus: h.GetHealthStatus(), HealthStatusReason: h.GetHealthStatusReason(), NodeGroups: []liveNodeGroup{}}
	for _, g := range s.GetNodegroups() {
		addrs := g.GetNodeAddresses()
		if addrs == nil {
			addrs = []string{}
		}
		sidecar.NodeGroups = append(sidecar.NodeGroups, liveNodeGroup{g.GetName(), g.GetStatus(), g.GetStatusReason(), int(g.GetNodeCount()), addrs})
	}
	return live, sidecar
}

func asJSON(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}
