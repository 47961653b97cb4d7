package server

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/magnum-capi/magnum-capi/capistatus"
	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
	"github.com/magnum-capi/magnum-capi/server/clusters"
)

// statusOnly answers Status with a fixed result (a fake of one method, for
// this handler's unit test).
type statusOnly struct {
	Clusters
	res capistatus.Result
}

func (s statusOnly) Status(context.Context, clusters.Spec) (capistatus.Result, error) {
	return s.res, nil
}

// The verbatim controller messages behind a rewritten status_reason reach
// the operator's log under the request id; the answer carries only the
// tenant's text.
func TestStatusLogsRewrittenMessages(t *testing.T) {
	original := `failed to delete network: Expected HTTP response code [202 204] when accessing [DELETE https://neutron.internal:9696/v2.0/networks/25c14f02-825e-5c1d-b049-69717de3bf5a], but got 409 instead`
	for _, tt := range []struct {
		name      string
		rewritten []string
		logged    bool
	}{
		{"reason changed", []string{original}, true},
		{"nothing rewritten", nil, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := capistatus.Result{Status: "DELETE_IN_PROGRESS", StatusReason: "waiting for deletion of: the network service refused ...", Rewritten: tt.rewritten}
			svc := NewService(statusOnly{res: res})
			var buf bytes.Buffer
			intercept := unaryInterceptor(slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})), nil, nil)
			ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs(RequestIDKey, "req-7a1b"))
			info := &grpc.UnaryServerInfo{FullMethod: "/magnumcapi.v1.DriverService/GetClusterStatus"}
			resp, err := intercept(ctx, &pb.GetClusterStatusRequest{Spec: validSpec()}, info, func(ctx context.Context, req any) (any, error) {
				return svc.GetClusterStatus(ctx, req.(*pb.GetClusterStatusRequest))
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := resp.(*pb.GetClusterStatusResponse).GetStatus().GetStatusReason(); got != res.StatusReason {
				t.Errorf("status_reason = %q, want %q", got, res.StatusReason)
			}
			var found bool
			for dec := json.NewDecoder(&buf); dec.More(); {
				var line map[string]any
				if err := dec.Decode(&line); err != nil {
					t.Fatal(err)
				}
				if msgs, ok := line["controller_messages"].([]any); ok {
					found = true
					if line["request_id"] != "req-7a1b" || len(msgs) != 1 || msgs[0] != original {
						t.Errorf("log line %v: want request_id req-7a1b and the original message", line)
					}
				}
			}
			if found != tt.logged {
				t.Errorf("controller messages logged: %v, want %v", found, tt.logged)
			}
		})
	}
}
