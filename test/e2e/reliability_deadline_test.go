package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/status"
	"k8s.io/apimachinery/pkg/util/wait"

	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
)

// TestReliabilityCreateDeadline: the caller of a CreateCluster gives up
// (the shim's deadline passes, as it did for creates under load in the
// 200-cluster run) while the sidecar is still writing. Magnum then holds a
// CREATE_FAILED cluster without a stack_id, and the user deletes it. That
// delete must remove whatever the interrupted create made under the name it
// never returned: release, Secrets, Lease, application credential
// (server/clusters namedForDelete finds them by the cluster's uuid).
func TestReliabilityCreateDeadline(t *testing.T) {
	c := newCluster(t, "deadline", "v1.33.2", 1)
	// Its stack_id is never returned: its uuid names what it made.
	before := footprintOf(t, c.owner())
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	_, err := driver.CreateCluster(ctx, &pb.CreateClusterRequest{Context: c.ctx, Spec: c.spec, Certificates: c.certs})
	cancel()
	// Usually DeadlineExceeded; should the create finish first, its answer
	// is dropped all the same (a reply lost on the way is the same case).
	t.Logf("the create answered %v", status.Code(err))
	// The sidecar finishes the deploy its caller gave up on: wait until its
	// CAPI Cluster is written, whose name is the stack_id never returned.
	var made []string
	_ = wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		made = before.changes(footprintOf(t, c.owner()))
		return slices.ContainsFunc(made, addedCluster), nil
	})
	t.Logf("the interrupted create left:\n%s", strings.Join(made, "\n"))
	// What it made under the name it never returned, the controllers'
	// objects (kubeconfig) included, is named after the CAPI Cluster.
	owner := c.owner()
	for _, change := range made {
		if addedCluster(change) {
			_, name, _ := strings.Cut(change, " Cluster ")
			owner.stackID = name[strings.Index(name, "/")+1:]
		}
	}

	c.spec.Cluster.Status, c.spec.Cluster.StatusReason = "CREATE_FAILED", "deadline exceeded"
	c.setStatus("DELETE_IN_PROGRESS")
	ctx, cancel = callCtx()
	_, err = driver.DeleteCluster(ctx, &pb.DeleteClusterRequest{Context: c.ctx, Spec: c.spec})
	cancel()
	if err != nil {
		t.Fatalf("DeleteCluster without a stack_id: %v", err)
	}
	if err := c.poll("DELETE_COMPLETE", 3*time.Minute); err != nil {
		t.Fatal(err)
	}
	var leaked []string
	for _, change := range before.changes(footprintOf(t, owner)) {
		// The project's namespace is shared and kept.
		if !(strings.HasPrefix(change, "added ") && strings.Contains(change, " Namespace ")) {
			leaked = append(leaked, change)
		}
	}
	if len(leaked) > 0 {
		t.Errorf("left after DELETE_COMPLETE:\n%s", strings.Join(leaked, "\n"))
	}
}

// addedCluster says whether a footprint change is a CAPI Cluster added.
func addedCluster(change string) bool {
	return strings.HasPrefix(change, "added ") && strings.Contains(change, " Cluster ")
}
