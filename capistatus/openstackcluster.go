package capistatus

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// OpenStackCluster holds the fields of CAPO's OpenStackCluster
// (infrastructure.cluster.x-k8s.io/v1beta1, CAPO v0.14) that status derivation
// reads. CAPO has no Go module in this repository, so this is a small typed
// subset; unknown fields are ignored. The sidecar's watch cache decodes
// OpenStackClusters into it, so it never holds their networks, subnets,
// security group rules and bastion.
type OpenStackCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              OpenStackClusterSpec   `json:"spec,omitempty"`
	Status            OpenStackClusterStatus `json:"status,omitempty"`
}

// OpenStackClusterSpec is the part of the spec status derivation reads.
type OpenStackClusterSpec struct {
	// ControlPlaneEndpoint is filled by CAPO once the API load balancer or
	// floating IP exists, before CAPI copies it to the Cluster.
	ControlPlaneEndpoint *clusterv1.APIEndpoint `json:"controlPlaneEndpoint,omitempty"`
}

// OpenStackClusterStatus is the part of the status status derivation reads.
type OpenStackClusterStatus struct {
	// Ready is CAPO's (deprecated) readiness flag; Initialization.Provisioned is
	// its v1beta2-contract successor. Either means ready.
	Ready          bool                            `json:"ready,omitempty"`
	Initialization *OpenStackClusterInitialization `json:"initialization,omitempty"`
	// FailureReason and FailureMessage are set by CAPO on terminal errors, e.g.
	// Octavia or Neutron quota exceeded while creating the API load balancer.
	FailureReason  *string `json:"failureReason,omitempty"`
	FailureMessage *string `json:"failureMessage,omitempty"`
	// Conditions are v1beta1-shaped (type, status, severity, reason, message).
	Conditions clusterv1.Conditions `json:"conditions,omitempty"`
}

// OpenStackClusterInitialization is CAPO's status.initialization.
type OpenStackClusterInitialization struct {
	Provisioned *bool `json:"provisioned,omitempty"`
}

// DeepCopyInto copies o into out.
func (o *OpenStackCluster) DeepCopyInto(out *OpenStackCluster) {
	*out = *o
	o.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	if o.Spec.ControlPlaneEndpoint != nil {
		out.Spec.ControlPlaneEndpoint = new(*o.Spec.ControlPlaneEndpoint)
	}
	s, d := &o.Status, &out.Status
	if s.Initialization != nil && s.Initialization.Provisioned != nil {
		d.Initialization = &OpenStackClusterInitialization{Provisioned: new(*s.Initialization.Provisioned)}
	} else if s.Initialization != nil {
		d.Initialization = &OpenStackClusterInitialization{}
	}
	if s.FailureReason != nil {
		d.FailureReason = new(*s.FailureReason)
	}
	if s.FailureMessage != nil {
		d.FailureMessage = new(*s.FailureMessage)
	}
	d.Conditions = s.Conditions.DeepCopy()
}

// OpenStackClusterFromUnstructured converts an OpenStackCluster read as
// unstructured content (from the API or a file) into the typed subset. The
// error says which field had the wrong type.
func OpenStackClusterFromUnstructured(obj map[string]any) (*OpenStackCluster, error) {
	var osc OpenStackCluster
	if err := fromUnstructured(obj, &osc); err != nil {
		return nil, err
	}
	return &osc, nil
}

// isReady reports whether CAPO says the infrastructure is provisioned.
func (o *OpenStackCluster) isReady() bool {
	if o.Status.Ready {
		return true
	}
	return o.Status.Initialization != nil && o.Status.Initialization.Provisioned != nil && *o.Status.Initialization.Provisioned
}

// failure is CAPO's terminal failure as one line, or "" when there is none.
func (o *OpenStackCluster) failure() string {
	return joinFailure(o.Status.FailureReason, o.Status.FailureMessage)
}

// joinFailure renders a (failureReason, failureMessage) pair: the message is
// what the user can act on; the reason is CAPI's machine-readable token.
func joinFailure(reason, message *string) string {
	r, m := deref(reason), tenantText(deref(message))
	switch {
	case r != "" && m != "":
		return m + " (" + r + ")"
	case m != "":
		return m
	default:
		return r
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
