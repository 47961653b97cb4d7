package clusters

import (
	"encoding/json"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/magnum-capi/magnum-capi/certs"
	"github.com/magnum-capi/magnum-capi/helmvalues"
)

// The hand-off's record is a Secret without data in the cluster's
// namespace, <stack_id>-argocd, with the driver's Secret labels (so the
// cleanup after delete removes it with the others). It holds the Magnum
// facts the Argo CD Secret is made from, which the hand-off's reconciler
// has no Magnum request to learn, and the digest of the Argo CD Secret last
// written (gitopsAbsentDigest: none is wanted), so a reconcile that would
// write the same writes nothing. Any sidecar, after any restart, reads it.
const (
	gitopsFactsAnnotation   = "magnum-capi.io/argocd-facts"
	gitopsWrittenAnnotation = "magnum-capi.io/argocd-written"
	// gitopsAbsentDigest: the cluster's Argo CD Secret was deleted.
	gitopsAbsentDigest = "absent"
)

func gitopsRecordName(stackID string) string { return stackID + "-argocd" }

// gitopsFacts are the Magnum facts of one cluster the hand-off uses.
type gitopsFacts struct {
	Name         string `json:"name"`
	UUID         string `json:"uuid"`
	ProjectID    string `json:"projectID"`
	TemplateUUID string `json:"templateUUID"`
	TemplateName string `json:"templateName"`
	// Register is the template's argocd_register label, nil when it has none.
	Register   *string           `json:"register,omitempty"`
	NodeGroups []gitopsNodeGroup `json:"nodeGroups,omitempty"`
}

type gitopsNodeGroup struct {
	Name string `json:"name"`
	Role string `json:"role"`
}

func factsOf(spec Spec) gitopsFacts {
	f := gitopsFacts{
		Name: spec.Cluster.Name, UUID: spec.Cluster.UUID, ProjectID: spec.Cluster.ProjectID,
		TemplateUUID: spec.Template.UUID, TemplateName: spec.Template.Name,
	}
	if v, ok := spec.Template.Labels[helmvalues.ArgoCDRegisterLabel]; ok {
		f.Register = &v
	}
	for _, ng := range spec.NodeGroups {
		f.NodeGroups = append(f.NodeGroups, gitopsNodeGroup{Name: ng.Name, Role: ng.Role})
	}
	return f
}

// spec is what the hand-off knows of the cluster stackID from f.
func (f gitopsFacts) spec(stackID string) Spec {
	spec := Spec{
		Cluster:  helmvalues.Cluster{StackID: stackID, Name: f.Name, UUID: f.UUID, ProjectID: f.ProjectID},
		Template: helmvalues.ClusterTemplate{UUID: f.TemplateUUID, Name: f.TemplateName},
	}
	if f.Register != nil {
		spec.Template.Labels = map[string]string{helmvalues.ArgoCDRegisterLabel: *f.Register}
	}
	for _, ng := range f.NodeGroups {
		spec.NodeGroups = append(spec.NodeGroups, helmvalues.NodeGroup{Name: ng.Name, Role: ng.Role})
	}
	return spec
}

// gitopsRecord is the record of op's cluster, the Argo CD Secret written
// having digest written.
func gitopsRecord(op *operation, written string) (*corev1.Secret, error) {
	facts, err := json.Marshal(factsOf(op.spec))
	if err != nil {
		return nil, err
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: gitopsRecordName(op.stackID()), Namespace: op.ns,
			Labels:      op.owner().Labels(),
			Annotations: map[string]string{gitopsFactsAnnotation: string(facts), gitopsWrittenAnnotation: written},
		},
		Type: corev1.SecretTypeOpaque,
	}, nil
}

// specOfRecord is the cluster as its record describes it.
func specOfRecord(rec *corev1.Secret, stackID string) (Spec, error) {
	var f gitopsFacts
	if err := json.Unmarshal([]byte(rec.Annotations[gitopsFactsAnnotation]), &f); err != nil {
		return Spec{}, fmt.Errorf("the Argo CD hand-off's record %s/%s: %w", rec.Namespace, rec.Name, err)
	}
	spec := f.spec(stackID)
	spec.Cluster.UserID = rec.Labels[certs.UserIDLabel]
	return spec, nil
}

// recordSays: rec (nil: none) holds want's facts and written digest.
func recordSays(rec, want *corev1.Secret) bool {
	return rec != nil && maps.Equal(rec.Annotations, want.Annotations) && maps.Equal(rec.Labels, want.Labels)
}

// secretDigest fingerprints an Argo CD Secret as written: its data, labels
// and annotations.
func secretDigest(s *corev1.Secret) string {
	meta := map[string]string{}
	for k, v := range s.Labels {
		meta["label:"+k] = v
	}
	for k, v := range s.Annotations {
		meta["annotation:"+k] = v
	}
	return digest(s.Data, meta)
}
