package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/magnum-capi/magnum-capi/server/panics"
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

// An error no class explains, or a panic, reaches the tenant as one fixed
// sentence; the operator's log has the cause under Magnum's request id.
func TestInternalErrorsAreLoggedUnderTheRequestID(t *testing.T) {
	cause := `renewing credential: Post "https://keystone.internal:5000/v3/auth/tokens": EOF`
	withID := internalMessage + " (a bug; the operator's log has it under request req-0c9d2e7a)"
	tests := []struct {
		name    string
		handler grpc.UnaryHandler
		logged  string
		message string
		counted string // where a panic is counted; "": none
	}{
		{"error", func(context.Context, any) (any, error) { return nil, toStatus(errors.New(cause)) }, cause, internalMessage, ""},
		{"panic", func(context.Context, any) (any, error) { panic(cause) }, cause, withID, "grpc//magnumcapi.v1.DriverService/CreateCluster"},
		{"panic in the operation's goroutine", func(ctx context.Context, _ any) (any, error) {
			return nil, toStatus(fmt.Errorf("creating: %w", panics.Run(ctx, Logger(ctx, nil), "test/goroutine", func() error { panic(cause) })))
		}, cause, withID, "test/goroutine"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			intercept := unaryInterceptor(slog.New(slog.NewJSONHandler(&buf, nil)), nil, nil)
			info := &grpc.UnaryServerInfo{FullMethod: "/magnumcapi.v1.DriverService/CreateCluster"}
			ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs(RequestIDKey, "req-0c9d2e7a"))
			before := panics.Count(tt.counted)
			_, err := intercept(ctx, nil, info, tt.handler)
			if s, _ := status.FromError(err); s.Code() != codes.Internal || s.Message() != tt.message {
				t.Errorf("status = %v, want Internal %q", err, tt.message)
			}
			if tt.counted != "" && panics.Count(tt.counted) != before+1 {
				t.Errorf("the panic was not counted at %s", tt.counted)
			}
			var line map[string]any // the first: a panic's own, then the call's
			if err := json.NewDecoder(&buf).Decode(&line); err != nil {
				t.Fatalf("log %q: %v", buf.String(), err)
			}
			got := fmt.Sprint(line["err"], line["panic"])
			if line["request_id"] != "req-0c9d2e7a" || !strings.Contains(got, tt.logged) {
				t.Errorf("log line %v: want request_id req-0c9d2e7a and the cause %q", line, tt.logged)
			}
		})
	}
}
