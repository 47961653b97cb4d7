package clusters

import (
	"slices"
	"strconv"

	"github.com/magnum-capi/magnum-capi/helmvalues"
	"github.com/magnum-capi/magnum-capi/server/release"
)

// certificatesExpiryDefaultLabel records on the release (a label of Helm's
// release record, not of the cluster's objects) the
// control_plane_certificates_expiry_days a cluster gets when no label or
// site default sets it. The sidecar writes it when it installs the release;
// Helm keeps it on every later revision. A release without it was deployed
// before the default existed (or by StackHPC's driver, and adopted): its
// default is 0, so its next resize does not replace its control plane.
const certificatesExpiryDefaultLabel = "magnum.openstack.org/certificates-expiry-days-default"

// certificateRenewal completes t for the cluster's certificate renewal
// default: a fresh install records DefaultCertificatesExpiryDays; when no
// label or site default set the days (r.certExpirySet), t renews the
// control plane's certificates as the deployed release's record says
// (deployed nil: the install's own default).
func certificateRenewal(t *release.Target, r rendered, deployed *release.Release) {
	days := 0
	if deployed == nil {
		days = helmvalues.DefaultCertificatesExpiryDays
		t.RecordLabels = map[string]string{certificatesExpiryDefaultLabel: strconv.Itoa(days)}
	} else if recorded, err := strconv.Atoi(deployed.Labels[certificatesExpiryDefaultLabel]); err == nil && recorded > 0 {
		days = recorded
	}
	if r.certExpirySet || days == 0 {
		return
	}
	patches := specPatches(helmvalues.CertificatesExpiryPatches(days))
	t.SpecPatches = append(slices.Clip(t.SpecPatches), patches...)
}
