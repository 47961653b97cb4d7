package clusters

import (
	"strings"

	"github.com/magnum-capi/magnum-capi/capistatus"
	"github.com/magnum-capi/magnum-capi/helmvalues"
)

// withLabelNotes adds to the status_reason of a cluster being created or
// updated what its labels do not do as written (unknown, misspelled,
// deprecated or ignored labels: helmvalues.LabelNotes). Magnum shows
// status_reason to the user in `openstack coe cluster show` and the
// dashboard on every release from 15 on, and nothing else the driver says
// reaches them; once the cluster is complete or failed the reason is
// Cluster API's alone again (the notes are in the sidecar's log and in
// RenderValues' warnings).
func withLabelNotes(spec Spec, res capistatus.Result) capistatus.Result {
	if res.Status != "CREATE_IN_PROGRESS" && res.Status != "UPDATE_IN_PROGRESS" {
		return res
	}
	notes := helmvalues.LabelNotes(spec.Template.Labels, spec.Cluster.Labels)
	if len(notes) == 0 {
		return res
	}
	labels := "labels: " + strings.Join(notes, "; ")
	if res.StatusReason == "" {
		res.StatusReason = labels
	} else {
		res.StatusReason += " (" + labels + ")"
	}
	return res
}
