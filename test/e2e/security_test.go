package e2e

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/uuid"

	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
)

// checkLogs scans every line of a sidecar's debug log: each must be a JSON
// object, none may carry any of secrets or a PEM private key, and (when c is
// given) its calls must be logged with Magnum's request id and the cluster
// uuid from the gRPC metadata. minLines guards against scanning an empty log.
func checkLogs(t *testing.T, file string, c *cluster, secrets map[string]string, minLines int) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines, correlated := 0, 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		lines++
		var entry map[string]any
		if err := json.Unmarshal([]byte(line), &entry); err != nil {
			t.Errorf("%s:%d is not a JSON object: %.200s", file, lines, line)
		}
		for what, secret := range secrets {
			if strings.Contains(line, secret) {
				t.Errorf("%s:%d carries %s: %.200s", file, lines, what, line)
			}
		}
		if strings.Contains(line, "PRIVATE KEY") {
			t.Errorf("%s:%d carries a PEM private key: %.200s", file, lines, line)
		}
		if c != nil && entry["request_id"] == c.ctx.RequestId && entry["cluster_uuid"] == c.spec.Cluster.Uuid {
			correlated++
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if lines < minLines {
		t.Errorf("%s has %d lines, want at least %d: nothing was scanned", file, lines, minLines)
	}
	if c != nil && correlated == 0 {
		t.Errorf("no line of %s carries request_id %s and cluster_uuid %s", file, c.ctx.RequestId, c.spec.Cluster.Uuid)
	}
}

// TestErrorsCarryNoToken: when Keystone refuses a token, neither the error
// Magnum gets (it lands in status_reason, visible to users) nor the log line
// quotes the token.
func TestErrorsCarryNoToken(t *testing.T) {
	c := newCluster(t, "bad-token", "v1.33.2", 1)
	// A token Keystone never issued, shaped like a fernet token.
	bogus := "gAAAAABn" + strings.ReplaceAll(uuid.NewString()+uuid.NewString()+uuid.NewString(), "-", "")
	c.ctx.AuthToken = bogus
	ctx, cancel := c.callCtx()
	_, err := driver.CreateCluster(ctx, &pb.CreateClusterRequest{Context: c.ctx, Spec: c.spec, Certificates: c.certs})
	cancel()
	if err == nil {
		t.Fatal("CreateCluster with a token Keystone never issued succeeded")
	}
	if strings.Contains(err.Error(), bogus) || strings.Contains(err.Error(), bogus[:24]) {
		t.Errorf("the error quotes the token: %v", err)
	}
	t.Logf("error Magnum gets: %v", err)
	checkLogs(t, shared.LogFile, c, map[string]string{"the refused token": bogus[:24]}, 1)
}
