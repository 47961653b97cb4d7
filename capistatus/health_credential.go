package capistatus

import (
	"maps"
	"time"
)

// WithCredentialExpiry adds what the tenant must know of a cluster whose
// OpenStack application credential is due for renewal and was not renewed
// (the sidecar renews it only in operations a member of the project asks
// for): the key "credential" says when it expires and what to do. Once it
// has expired the cluster is UNHEALTHY: Cluster API and the cloud provider
// can no longer reach OpenStack, so nothing of the cluster's OpenStack side
// can change, its deletion included.
func WithCredentialExpiry(h Health, expires, now time.Time) Health {
	reasons := maps.Clone(h.Reasons)
	if reasons == nil {
		reasons = map[string]string{}
	}
	when := expires.UTC().Format("2006-01-02 15:04 UTC")
	const renew = "a member of the cluster's project renews it with `openstack coe credential rotate <cluster>` or any update or resize of the cluster"
	if now.Before(expires) {
		reasons[HealthKeyCredential] = "the cluster's OpenStack application credential expires at " + when + ": " + renew
		return Health{Status: h.Status, Reasons: reasons}
	}
	reasons[HealthKeyCredential] = "the cluster's OpenStack application credential expired at " + when +
		": the cluster cannot reach OpenStack (no new nodes, volumes or load balancers, and it cannot be deleted) until " + renew
	return Health{Status: Unhealthy, Reasons: reasons}
}
