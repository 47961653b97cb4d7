package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/magnum-capi/magnum-capi/certs"
	"github.com/magnum-capi/magnum-capi/helmvalues"
	"github.com/magnum-capi/magnum-capi/server/kube"
	"github.com/magnum-capi/magnum-capi/server/openstack"
	"github.com/magnum-capi/magnum-capi/server/panics"
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
		{"chart version missing", &release.ChartNotFoundError{Source: "s", Name: "n", Version: "v"}, codes.FailedPrecondition,
			"chart n version v is not available from the cloud's chart repository: use a cluster template with a version it has, or ask your cloud operator to publish it"},
		{"release missing", &release.NotFoundError{Name: "n", Namespace: "ns"}, codes.NotFound, ""},
		{"lock held: no holder for the tenant", &kube.LockedError{Lease: "magnum-capi-x", Holder: "conductor-1/4242/ab12", Err: context.DeadlineExceeded}, codes.Aborted,
			"another operation on this cluster is in progress; retry when it has finished"},
		{"lease lost: no holder for the tenant, whatever the operation said", &kube.LostError{Lease: "magnum-p/magnum-capi-x", Holder: "conductor-1/4242/ab12",
			Why: "another holder took it over (conductor-2/77/cd34)", During: fmt.Errorf("upgrading: %w", hung)}, codes.Aborted,
			"another instance of the Cluster API driver took over this cluster during the operation, which was stopped; retry it"},
		{"lease given up, renewals unanswered: the API is blamed", &kube.RenewalError{Lease: "magnum-p/magnum-capi-x", Holder: "conductor-1/4242/ab12",
			Deadline: 20 * time.Second, Err: hung, During: errors.New("installing: context canceled")}, codes.Unavailable, managementAPIMessage},
		{"a panic, whatever its value's class", fmt.Errorf("creating: %w", &panics.Error{Where: "release/install", Value: &kube.LockedError{Lease: "x"}}), codes.Internal, internalMessage},
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
		{"management API's admission policy refuses", fmt.Errorf("ensuring namespace: %w", apierrors.NewForbidden(schema.GroupResource{Resource: "namespaces"}, "magnum-0bbd",
			errors.New(`ValidatingAdmissionPolicy 'magnum-capi-project-namespaces' with binding 'magnum-capi-project-namespaces' denied request: a project namespace enforces Pod Security baseline or restricted`))),
			codes.FailedPrecondition, "the management cluster refused the Cluster API driver (forbidden: namespaces): an admission policy does not allow it; ask your cloud operator to apply the driver's RBAC (deploy/rbac)"},
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

// TestOperatorDetailStaysInTheLog: errors whose text names the operator's
// repository, files or endpoints give the tenant what failed and what to do,
// and nothing of those; the interceptor logs the whole error.
func TestOperatorDetailStaysInTheLog(t *testing.T) {
	const repo = "https://charts.internal.example:8443/capi"
	refused := &url.Error{Op: "Get", URL: repo + "/index.yaml", Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}
	tests := []struct {
		name     string
		err      error
		mentions []string // what the tenant must still read
		secret   []string // what only the operator may read
	}{
		{"chart version not in the repository",
			&release.ChartNotFoundError{Source: repo, Name: "openstack-cluster", Version: "0.27.5", Err: errors.New("the repository's index (fetched 2026-12-03T10:00:00Z) lists 0.27.0")},
			[]string{"openstack-cluster", "0.27.5", "cluster template"}, []string{repo, "charts.internal"}},
		{"chart version that is not one", fmt.Errorf("loading: %w", &release.ChartNotFoundError{Source: repo, Name: "openstack-cluster", Version: "../x", Err: errors.New("p"), ForUser: "not a chart version: expected a semantic version such as 0.27.0"}),
			[]string{"../x", "not a chart version"}, []string{repo}},
		{"repository unreachable", &release.UnreachableError{Source: repo, Name: "openstack-cluster", Version: "0.27.5", Cached: []string{"0.27.0"}, Err: refused},
			[]string{"0.27.5", "cached versions: 0.27.0", "retry later"}, []string{repo, "charts.internal", "8443", "refused"}},
		{"repository served a bad chart", &release.BadChartError{Source: repo, Name: "openstack-cluster", Version: "0.27.5", Problem: `its index entry's URL "http://10.1.2.3/x.tgz" does not parse`},
			[]string{"openstack-cluster", "0.27.5", "cloud operator"}, []string{repo, "10.1.2.3"}},
		{"clouds.yaml unreadable", &openstack.ConfigError{Field: "openstack.cloudsFile", Value: "/etc/magnum-capi/clouds.yaml", Problem: "cannot read: permission denied"},
			[]string{"openstack.cloudsFile", "cloud operator"}, []string{"/etc/magnum-capi", "permission denied"}},
		{"catalog without a service", &openstack.ConfigError{Field: "catalog", Value: "compute", Problem: "no such endpoint in the Keystone catalog for this region and interface"},
			[]string{"compute", "catalog"}, nil},
		{"Keystone URL unusable", &openstack.ConfigError{Field: "auth_url", Value: "https://keystone.internal:5000/v3", Problem: "parse error"},
			[]string{"auth_url"}, []string{"keystone.internal"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, _ := status.FromError(toStatus(tt.err))
			if st.Code() != codes.FailedPrecondition {
				t.Errorf("code = %v, want FailedPrecondition", st.Code())
			}
			for _, m := range tt.mentions {
				if !strings.Contains(st.Message(), m) {
					t.Errorf("message %q does not mention %q", st.Message(), m)
				}
			}
			for _, s := range tt.secret {
				if strings.Contains(st.Message(), s) {
					t.Errorf("message %q shows the tenant %q", st.Message(), s)
				}
				if !strings.Contains(tt.err.Error(), s) {
					t.Errorf("the logged error %q lost %q", tt.err.Error(), s)
				}
			}
		})
	}
}
