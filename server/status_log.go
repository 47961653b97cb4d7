package server

import (
	"context"
	"log/slog"

	"github.com/magnum-capi/magnum-capi/capistatus"
)

// logRewritten gives the operator, under the call's request id, the
// controllers' messages that res's status_reason quotes in the tenant's
// words (without the URLs, ids and bodies of OpenStack's answers). It is
// logged when the reason changes, not on every poll: capistatus and
// clusters.onlyNewDetail leave Rewritten empty otherwise.
func logRewritten(ctx context.Context, res capistatus.Result) {
	if len(res.Rewritten) == 0 {
		return
	}
	Logger(ctx, slog.Default()).Info("status_reason quotes controller messages rewritten for the tenant",
		"status", res.Status, "status_reason", res.StatusReason, "controller_messages", res.Rewritten)
}
