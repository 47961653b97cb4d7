package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"syscall"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/magnum-capi/magnum-capi/certs"
	"github.com/magnum-capi/magnum-capi/helmvalues"
	"github.com/magnum-capi/magnum-capi/server/kube"
	"github.com/magnum-capi/magnum-capi/server/openstack"
	"github.com/magnum-capi/magnum-capi/server/release"
	"github.com/magnum-capi/magnum-capi/server/watchcache"
)

func TestToStatus(t *testing.T) {
	refused := &url.Error{Op: "Post", URL: "https://10.0.0.7:6443/api/v1/namespaces", Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}
	hung := &url.Error{Op: "Get", URL: "https://10.0.0.7:6443/apis/coordination.k8s.io/v1/leases", Err: context.DeadlineExceeded}
	gr := schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}
	tests := []struct {
		name string
		err  error
		want codes.Code
		msg  string // the status message; empty: the error's text
	}{
		{"label error", &helmvalues.FieldError{Field: "labels.boot_volume_size", Value: "x", Expected: "an integer"}, codes.InvalidArgument, ""},
		{"wrapped label error", fmt.Errorf("rendering: %w", &helmvalues.FieldError{Field: "f"}), codes.InvalidArgument, ""},
		{"joined errors keep the class", errors.Join(&helmvalues.FieldError{Field: "a"}, &helmvalues.FieldError{Field: "b"}), codes.InvalidArgument, ""},
		{"bad CA", &certs.InvalidError{Field: "certificates.ca", Reason: "r"}, codes.InvalidArgument, ""},
		{"chart version missing", &release.ChartNotFoundError{Source: "s", Name: "n", Version: "v"}, codes.FailedPrecondition, ""},
		{"release missing", &release.NotFoundError{Name: "n", Namespace: "ns"}, codes.NotFound, ""},
		{"lock held: no holder for the tenant", &kube.LockedError{Lease: "magnum-capi-x", Holder: "conductor-1/4242/ab12", Err: context.DeadlineExceeded}, codes.Aborted,
			"another operation on this cluster is in progress; retry when it has finished"},
		{"cache syncing: no API URL for the tenant", &watchcache.NotSyncedError{Cluster: "default", Problem: refused.Error()}, codes.Unavailable,
			"the magnum-capi sidecar's view of the management cluster is still syncing"},
		{"OpenStack down names OpenStack", fmt.Errorf("facts: %w", &openstack.UnavailableError{Service: "compute", Op: "list flavors", Detail: "HTTP 503"}), codes.Unavailable,
			"OpenStack compute service unavailable (list flavors): HTTP 503"},
		{"management API refused", fmt.Errorf("ensuring namespace: %w", refused), codes.Unavailable, managementAPIMessage},
		{"management API hung", fmt.Errorf("acquiring lease: %w", hung), codes.Unavailable, managementAPIMessage},
		{"management API 503", apierrors.NewServiceUnavailable("etcd leader changed"), codes.Unavailable, managementAPIMessage},
		{"management API 500", apierrors.NewInternalError(errors.New("etcdserver: request timed out")), codes.Unavailable, managementAPIMessage},
		{"management API 429", apierrors.NewTooManyRequests("slow down", 1), codes.Unavailable, managementAPIMessage},
		{"management API server timeout", apierrors.NewServerTimeout(gr, "get", 1), codes.Unavailable, managementAPIMessage},
		{"management API forbids a write", apierrors.NewForbidden(gr, "magnum-capi-x", errors.New(`User "system:serviceaccount:magnum-capi:magnum-capi" cannot create resource "leases" in API group "coordination.k8s.io" in the namespace "magnum-0bbd"`)),
			codes.FailedPrecondition, "the management cluster refused the Cluster API driver (forbidden: leases.coordination.k8s.io): it may not create them; ask your cloud operator to apply the driver's RBAC (deploy/rbac)"},
		{"management API forbids an escalation", fmt.Errorf("installing: %w", apierrors.NewForbidden(schema.GroupResource{Group: "rbac.authorization.k8s.io", Resource: "roles"}, "x-autoscaler",
			errors.New(`user "system:serviceaccount:magnum-capi:magnum-capi" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held: {APIGroups:["cluster.x-k8s.io"]}`))),
			codes.FailedPrecondition, "the management cluster refused the Cluster API driver (forbidden: roles.rbac.authorization.k8s.io): it may not grant permissions it does not hold itself; ask your cloud operator to apply the driver's RBAC (deploy/rbac)"},
		{"management API conflict is ours", apierrors.NewConflict(gr, "x", errors.New("changed")), codes.Internal, internalMessage},
		{"deadline", fmt.Errorf("helm: %w", context.DeadlineExceeded), codes.DeadlineExceeded, ""},
		{"cancelled", context.Canceled, codes.Canceled, canceledMessage},
		{"cancelled request", &url.Error{Op: "Get", URL: "https://10.0.0.7:6443/", Err: context.Canceled}, codes.Canceled, canceledMessage},
		{"already a status", status.Error(codes.ResourceExhausted, "x"), codes.ResourceExhausted, "x"},
		// The error's text is the operator's (the interceptor logs it with
		// the request id); the tenant reads a fixed sentence.
		{"anything else", errors.New("boom"), codes.Internal, internalMessage},
		{"a URL no class explains", fmt.Errorf("renewing: %w", errors.New(`Post "https://keystone.internal:5000/v3/auth/tokens": EOF in 3f2a`)), codes.Internal, internalMessage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := toStatus(tt.err)
			if code := status.Code(got); code != tt.want {
				t.Errorf("code = %v, want %v", code, tt.want)
			}
			want := tt.msg
			if want == "" {
				want = tt.err.Error()
			}
			if s, _ := status.FromError(got); s.Message() != want {
				t.Errorf("message = %q, want %q", s.Message(), want)
			}
			if cause := causeOf(got); cause != tt.err && tt.want != codes.ResourceExhausted {
				t.Errorf("the log's cause = %v, want the error itself", cause)
			}
		})
	}
	if toStatus(nil) != nil {
		t.Error("toStatus(nil) != nil")
	}
}
