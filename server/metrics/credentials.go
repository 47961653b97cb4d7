package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// CredentialExpiry is a cluster whose application credential is due for
// renewal and was not renewed, as the credential watch found it.
type CredentialExpiry struct {
	ManagementCluster, Namespace, StackID string
	ExpiresAt                             time.Time
}

func newCredentialExpiry() *prometheus.GaugeVec {
	return prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "credential_expiry_timestamp_seconds",
		Help: "When the application credential of a cluster expires, for each cluster whose credential is due for renewal " +
			"and was not renewed (only those: alert on any series). A member of the cluster's project renews it.",
	}, []string{"management_cluster", "namespace", "stack_id"})
}

// SetExpiringCredentials replaces the series with the credential watch's
// latest findings.
func (m *Metrics) SetExpiringCredentials(due []CredentialExpiry) {
	m.credentials.Reset()
	for _, d := range due {
		m.credentials.WithLabelValues(d.ManagementCluster, d.Namespace, d.StackID).Set(float64(d.ExpiresAt.Unix()))
	}
}
