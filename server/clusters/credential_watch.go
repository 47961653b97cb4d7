package clusters

import (
	"context"
	"sort"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/magnum-capi/magnum-capi/capistatus"
	"github.com/magnum-capi/magnum-capi/certs"
	"github.com/magnum-capi/magnum-capi/server/panics"
)

// The sidecar renews a cluster's application credential only in an
// operation a member of its project asks for (Keystone makes a user's
// credential for that user alone). A cluster nobody touches in the renewal
// window would lose OpenStack at the expiry, and its deletion would then
// fail. The credential watch finds such clusters: it lists the credential
// Secrets' metadata (their expiry annotation) in every management cluster,
// logs each one due, tells the metrics, and health polls add what the
// tenant must do (capistatus.WithCredentialExpiry), from memory.

// CredentialWatchInterval is how often the credential watch lists.
const CredentialWatchInterval = 10 * time.Minute

// ExpiringCredential is a cluster whose credential is due for renewal and
// was not renewed.
type ExpiringCredential struct {
	ManagementCluster, Namespace, StackID string
	ExpiresAt                             time.Time
}

// credentialWatch is what the last listing found due, by namespace/stack id.
type credentialWatch struct {
	mu  sync.Mutex
	due map[string]ExpiringCredential
}

func credentialKey(ns, stackID string) string { return ns + "/" + stackID }

// WatchCredentials lists at once and then every interval until ctx ends,
// handing each listing's findings to report (the metrics). A listing that
// fails (or panics: recovered, counted) keeps the last findings and is
// logged.
func (s *Service) WatchCredentials(ctx context.Context, interval time.Duration, report func([]ExpiringCredential)) {
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		var due []ExpiringCredential
		err := panics.Run(ctx, s.log, "clusters/credentialWatch", func() (err error) {
			due, err = s.scanCredentials(ctx)
			return err
		})
		if err != nil {
			s.log.WarnContext(ctx, "credential watch: listing the credential Secrets failed; trying again later", "err", err)
			return
		}
		s.credentials.mu.Lock()
		s.credentials.due = map[string]ExpiringCredential{}
		for _, d := range due {
			s.credentials.due[credentialKey(d.Namespace, d.StackID)] = d
		}
		s.credentials.mu.Unlock()
		if report != nil {
			report(due)
		}
	}, interval)
}

// scanCredentials lists every management cluster's credential Secrets and
// returns the clusters due for renewal, logging each.
func (s *Service) scanCredentials(ctx context.Context) ([]ExpiringCredential, error) {
	var due []ExpiringCredential
	now := s.now()
	for _, mc := range s.mgmt {
		secrets, err := mc.Kube.SecretsWithLabel(ctx, certs.ClusterUUIDLabel)
		if err != nil {
			return nil, err
		}
		for _, sec := range secrets {
			stackID, ok := strings.CutSuffix(sec.Name, credentialSecretName(""))
			expires, err := time.Parse(time.RFC3339, sec.Annotations[CredentialExpiresAnnotation])
			if !ok || err != nil || !credentialRenewalDue(expires, now, s.cfg.CredentialRenewBefore) {
				continue
			}
			d := ExpiringCredential{ManagementCluster: mc.Name, Namespace: sec.Namespace, StackID: stackID, ExpiresAt: expires}
			s.log.WarnContext(ctx, "application credential due for renewal and not renewed: a member of the cluster's project must rotate it or update the cluster",
				"management_cluster", mc.Name, "namespace", d.Namespace, "stack_id", stackID, "expires", expires, "expired", !now.Before(expires))
			due = append(due, d)
		}
	}
	sort.Slice(due, func(i, j int) bool {
		return credentialKey(due[i].Namespace, due[i].StackID) < credentialKey(due[j].Namespace, due[j].StackID)
	})
	return due, nil
}

// withCredentialWatch adds the credential watch's finding for op's
// cluster to its health.
func (s *Service) withCredentialWatch(h capistatus.Health, ns, stackID string) capistatus.Health {
	s.credentials.mu.Lock()
	d, due := s.credentials.due[credentialKey(ns, stackID)]
	s.credentials.mu.Unlock()
	if !due {
		return h
	}
	return capistatus.WithCredentialExpiry(h, d.ExpiresAt, s.now())
}

// forget drops a cluster whose credential was just renewed, so health stops
// warning before the next listing.
func (w *credentialWatch) forget(ns, stackID string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.due, credentialKey(ns, stackID))
}
