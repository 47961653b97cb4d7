package clusters

import (
	"errors"
	"strings"
	"testing"

	"github.com/magnum-capi/magnum-capi/helmvalues"
)

func TestEndpointChangeError(t *testing.T) {
	err := error(&EndpointChangeError{Changes: []helmvalues.EndpointChange{
		{Label: "api_server_lb_flavor", Deployed: "amphora", Requested: "amphora-ha"},
		{Label: "api_server_floating_ip", Deployed: "", Requested: "203.0.113.10"},
	}})
	for _, w := range []string{`label api_server_lb_flavor: the cluster was created with "amphora", and this asks for "amphora-ha"`,
		`label api_server_floating_ip: the cluster was created with it unset, and this asks for "203.0.113.10"`,
		"is fixed when the cluster is created"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q, want it to say %q", err, w)
		}
	}
	var ia interface{ InvalidArgument() bool }
	if !errors.As(err, &ia) || !ia.InvalidArgument() {
		t.Errorf("error %v is not InvalidArgument", err)
	}
}
