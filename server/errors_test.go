package server

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/magnum-capi/magnum-capi/certs"
	"github.com/magnum-capi/magnum-capi/helmvalues"
	"github.com/magnum-capi/magnum-capi/server/kube"
	"github.com/magnum-capi/magnum-capi/server/release"
	"github.com/magnum-capi/magnum-capi/server/watchcache"
)

func TestToStatus(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want codes.Code
	}{
		{"label error", &helmvalues.FieldError{Field: "labels.boot_volume_size", Value: "x", Expected: "an integer"}, codes.InvalidArgument},
		{"wrapped label error", fmt.Errorf("rendering: %w", &helmvalues.FieldError{Field: "f"}), codes.InvalidArgument},
		{"joined errors keep the class", errors.Join(&helmvalues.FieldError{Field: "a"}, &helmvalues.FieldError{Field: "b"}), codes.InvalidArgument},
		{"bad CA", &certs.InvalidError{Field: "certificates.ca", Reason: "r"}, codes.InvalidArgument},
		{"chart version missing", &release.ChartNotFoundError{Source: "s", Name: "n", Version: "v"}, codes.FailedPrecondition},
		{"release missing", &release.NotFoundError{Name: "n", Namespace: "ns"}, codes.NotFound},
		{"lock held", &kube.LockedError{Lease: "l", Holder: "h", Err: context.DeadlineExceeded}, codes.Aborted},
		{"cache syncing", &watchcache.NotSyncedError{Cluster: "default"}, codes.Unavailable},
		{"deadline", fmt.Errorf("helm: %w", context.DeadlineExceeded), codes.DeadlineExceeded},
		{"cancelled", context.Canceled, codes.Canceled},
		{"already a status", status.Error(codes.ResourceExhausted, "x"), codes.ResourceExhausted},
		{"anything else", errors.New("boom"), codes.Internal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := status.Code(toStatus(tt.err))
			if got != tt.want {
				t.Errorf("code = %v, want %v", got, tt.want)
			}
			if s, _ := status.FromError(toStatus(tt.err)); s.Message() != tt.err.Error() && tt.want != codes.ResourceExhausted {
				t.Errorf("message = %q, want the error's text %q", s.Message(), tt.err.Error())
			}
		})
	}
	if toStatus(nil) != nil {
		t.Error("toStatus(nil) != nil")
	}
}
