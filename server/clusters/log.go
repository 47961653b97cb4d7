package clusters

import (
	"context"
	"log/slog"
)

type loggerKey struct{}

// WithLogger carries the request's logger (the gRPC layer's, with Magnum's
// request id and the cluster uuid) to what the domain logs on its own
// account while serving that request, such as a failed Argo CD hand-off.
func WithLogger(ctx context.Context, l *slog.Logger) context.Context {
	return context.WithValue(ctx, loggerKey{}, l)
}

// logger is the request's logger, else the service's.
func (s *Service) logger(ctx context.Context) *slog.Logger {
	if l, ok := ctx.Value(loggerKey{}).(*slog.Logger); ok {
		return l
	}
	return s.log
}
