package server

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"google.golang.org/grpc"
)

// A handler stuck on a dependency that never answers ends before the
// caller's deadline, so the caller reads the handler's error (naming the
// dependency), not its own "deadline exceeded" blaming the sidecar.
func TestHandlerAnswersBeforeTheCallersDeadline(t *testing.T) {
	tests := []struct {
		name    string
		timeout time.Duration
	}{
		{"Magnum's call timeout", 45 * time.Second},
		{"a short status call", 500 * time.Millisecond},
	}
	intercept := unaryInterceptor(slog.New(slog.DiscardHandler), nil, nil)
	info := &grpc.UnaryServerInfo{FullMethod: "/magnumcapi.v1.DriverService/CreateCluster"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), tt.timeout)
			defer cancel()
			callerDeadline, _ := ctx.Deadline()
			var handlerDeadline time.Time
			_, err := intercept(ctx, nil, info, func(ctx context.Context, _ any) (any, error) {
				handlerDeadline, _ = ctx.Deadline()
				return nil, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if reserve := callerDeadline.Sub(handlerDeadline); reserve <= 0 || reserve > answerReserve {
				t.Fatalf("the handler's deadline is %v before the caller's, want within (0, %v]", reserve, answerReserve)
			}
		})
	}
}
