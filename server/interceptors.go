package server

import (
	"context"
	"log/slog"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
	"github.com/magnum-capi/magnum-capi/server/clusters"
	"github.com/magnum-capi/magnum-capi/server/panics"
)

// Metadata keys the shim sends with every call.
const (
	RequestIDKey   = "x-openstack-request-id"
	ClusterUUIDKey = "magnum-cluster-uuid"
)

type loggerKey struct{}

// Logger returns the request-scoped logger (with Magnum's request id and the
// cluster uuid) or the fallback.
func Logger(ctx context.Context, fallback *slog.Logger) *slog.Logger {
	if l, ok := ctx.Value(loggerKey{}).(*slog.Logger); ok {
		return l
	}
	return fallback
}

func first(md metadata.MD, key string) string {
	if v := md.Get(key); len(v) > 0 {
		return v[0]
	}
	return ""
}

// observer receives the outcome of every call (metrics live elsewhere).
type observer func(method string, code codes.Code, elapsed time.Duration)

// transitionObserver receives each cluster status change a status poll
// reports: from is the status Magnum sent, to the one it is told.
type transitionObserver func(from, to string)

// statusTransition reads a successful GetClusterStatus call: the status
// Magnum holds and the one the answer gives it.
func statusTransition(req, resp any) (from, to string, ok bool) {
	q, isReq := req.(*pb.GetClusterStatusRequest)
	a, isResp := resp.(*pb.GetClusterStatusResponse)
	if !isReq || !isResp || a.GetStatus() == nil {
		return "", "", false
	}
	return q.GetSpec().GetCluster().GetStatus(), a.GetStatus().GetStatus(), true
}

// answerReserve is the part of the caller's deadline the handler leaves
// for what follows a failure (deleting a new application credential,
// releasing the cluster's Lease, at most 2 s) and for its answer to reach
// the caller: a dependency that hangs (an API server that accepts
// connections and never answers) then comes back as an error naming it,
// before the caller gives up on the sidecar and blames it.
const answerReserve = 5 * time.Second

// answerInTime is ctx ending answerReserve (at most a quarter of the time
// left) before the caller's deadline.
func answerInTime(ctx context.Context) (context.Context, context.CancelFunc) {
	deadline, ok := ctx.Deadline()
	if !ok {
		return context.WithCancel(ctx)
	}
	return context.WithDeadline(ctx, deadline.Add(-min(answerReserve, time.Until(deadline)/4)))
}

// unaryInterceptor logs each call with Magnum's request id and the cluster
// uuid, turns panics, its own and those its operation's goroutines
// recovered (server/panics), into Internal errors naming the request id (a
// bug must not kill the sidecar for every other cluster), and reports the
// outcome. Request bodies are never logged: they carry tokens and keys.
func unaryInterceptor(log *slog.Logger, observe observer, transition transitionObserver) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
		md, _ := metadata.FromIncomingContext(ctx)
		l := log.With("method", info.FullMethod)
		requestID := first(md, RequestIDKey)
		if id := requestID; id != "" {
			l = l.With("request_id", id)
		}
		if uuid := first(md, ClusterUUIDKey); uuid != "" {
			l = l.With("cluster_uuid", uuid)
		}
		ctx = context.WithValue(ctx, loggerKey{}, l)
		ctx = clusters.WithLogger(ctx, l)
		ctx, cancel := answerInTime(ctx)
		defer cancel()
		start := time.Now()
		defer func() {
			if r := recover(); r != nil {
				err = panics.Report(ctx, l, "grpc/"+info.FullMethod, r)
			}
			err = withRequestID(err, requestID)
			code := status.Code(err)
			if code != codes.OK && appliedOf(causeOf(err)) {
				_ = grpc.SetTrailer(ctx, metadata.Pairs(AppliedTrailer, "true"))
			}
			elapsed := time.Since(start)
			if observe != nil {
				observe(info.FullMethod, code, elapsed)
			}
			if from, to, ok := statusTransition(req, resp); ok && code == codes.OK && transition != nil && from != to {
				transition(from, to)
			}
			attrs := []any{"code", code.String(), "elapsed_ms", elapsed.Milliseconds()}
			switch code {
			case codes.OK:
				l.Debug("call", attrs...)
			case codes.InvalidArgument, codes.FailedPrecondition, codes.NotFound, codes.Aborted:
				l.Info("call refused", append(attrs, "err", causeOf(err).Error())...)
			default:
				l.Error("call failed", append(attrs, "err", causeOf(err).Error())...)
			}
		}()
		return handler(ctx, req)
	}
}
