package capistatus

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// OpenStackServer holds the fields of CAPO's OpenStackServer
// (infrastructure.cluster.x-k8s.io/v1alpha1, CAPO >= v0.12) that status
// derivation reads. CAPO creates one per OpenStackMachine, with the same
// name, and keeps there what Nova answered: a refused create (e.g. the
// instance quota) and a server in ERROR are conditions of the
// OpenStackServer only, while the OpenStackMachine, and so the Machine,
// keep waiting with whatever they said before.
type OpenStackServer struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Status            OpenStackServerStatus `json:"status,omitempty"`
}

// OpenStackServerStatus is the part of the status status derivation reads.
type OpenStackServerStatus struct {
	Ready         bool    `json:"ready,omitempty"`
	InstanceState *string `json:"instanceState,omitempty"`
	// Conditions are v1beta1-shaped (type, status, severity, reason, message).
	Conditions clusterv1.Conditions `json:"conditions,omitempty"`
}

// DeepCopyInto copies o into out.
func (o *OpenStackServer) DeepCopyInto(out *OpenStackServer) {
	*out = *o
	o.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	if o.Status.InstanceState != nil {
		out.Status.InstanceState = new(*o.Status.InstanceState)
	}
	out.Status.Conditions = o.Status.Conditions.DeepCopy()
}

// OpenStackServerFromUnstructured converts an OpenStackServer read as
// unstructured content into the typed subset; the error names the field of
// the wrong type.
func OpenStackServerFromUnstructured(obj map[string]any) (*OpenStackServer, error) {
	var s OpenStackServer
	if err := fromUnstructured(obj, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// novaError is what Nova said about a server that did not come up, as CAPO
// reports it (InstanceReady false with severity Error), after the server's
// title: ": <Nova's error>", or " is in ERROR state" when CAPO quotes
// nothing; "" when Nova said nothing wrong.
func (o *OpenStackServer) novaError() string {
	c := findV1(o.Status.Conditions, "InstanceReady")
	if !c.isError() {
		return ""
	}
	if c.reason == "InstanceStateError" && oneLine(c.message) == "" {
		return " is in ERROR state"
	}
	return ": " + c.fullText()
}

// serverOf is the OpenStackServer of a machine: CAPO names it after the
// machine's OpenStackMachine.
func serverOf(m *clusterv1.Machine, servers []OpenStackServer) *OpenStackServer {
	if m.Spec.InfrastructureRef.Kind != "OpenStackMachine" {
		return nil
	}
	for i := range servers {
		if servers[i].Name == m.Spec.InfrastructureRef.Name {
			return &servers[i]
		}
	}
	return nil
}
