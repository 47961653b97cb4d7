package capistatus

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Addon phases of the azimuth cluster-api-addon-provider (AddonPhase). An
// addon without a status is Unknown: the provider writes status without
// defaults.
const (
	AddonUnknown      = "Unknown"
	AddonPending      = "Pending"
	AddonPreparing    = "Preparing"
	AddonDeployed     = "Deployed"
	AddonFailed       = "Failed"
	AddonInstalling   = "Installing"
	AddonUpgrading    = "Upgrading"
	AddonUninstalling = "Uninstalling"
)

// Addon is one HelmRelease or Manifests object (addons.stackhpc.com/v1alpha1)
// of the cluster, reduced to what status derivation reads.
type Addon struct {
	Kind, Namespace, Name string
	// ClusterName is spec.clusterName: the CAPI Cluster the addon targets.
	ClusterName string
	// Phase is status.phase; "" is read as Unknown.
	Phase          string
	FailureMessage string
	Created        time.Time
	Deleting       bool
	// FailedSince is when the addon was first seen Failed, zero if unknown. The
	// watch cache sets it from its own observations; AddonFromUnstructured sets
	// it from the last status write recorded in metadata.managedFields (a
	// Failed phase is the provider's last status write). Zero counts as
	// "failing since now": the grace period has not run out.
	FailedSince time.Time
}

// AddonObject is a HelmRelease or Manifests object with only the fields
// status derivation reads: the shape AddonFromUnstructured converts through
// (so that a field of the wrong type is an error naming the field), and the
// shape the sidecar's watch cache decodes addons into, so it never holds
// their chart values or manifests.
type AddonObject struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              AddonSpec   `json:"spec,omitempty"`
	Status            AddonStatus `json:"status,omitempty"`
}

// AddonSpec is the part of an addon's spec status derivation reads.
type AddonSpec struct {
	ClusterName string `json:"clusterName,omitempty"`
}

// AddonStatus is the part of an addon's status status derivation reads.
type AddonStatus struct {
	Phase          string `json:"phase,omitempty"`
	FailureMessage string `json:"failureMessage,omitempty"`
}

// DeepCopyInto copies o into out (the metadata deeply).
func (o *AddonObject) DeepCopyInto(out *AddonObject) {
	*out = *o
	o.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
}

// AddonFromUnstructured converts a HelmRelease or Manifests object read as
// unstructured content into an Addon.
func AddonFromUnstructured(obj map[string]any) (Addon, error) {
	var o AddonObject
	if err := fromUnstructured(obj, &o); err != nil {
		return Addon{}, err
	}
	return AddonFromObject(&o)
}

// AddonFromObject reads an addon decoded into its partial shape.
func AddonFromObject(o *AddonObject) (Addon, error) {
	if o.Kind != "HelmRelease" && o.Kind != "Manifests" {
		return Addon{}, fmt.Errorf("kind: %q is not an addon, expected HelmRelease or Manifests", o.Kind)
	}
	a := Addon{
		Kind:           o.Kind,
		Namespace:      o.Namespace,
		Name:           o.Name,
		ClusterName:    o.Spec.ClusterName,
		Phase:          o.Status.Phase,
		FailureMessage: o.Status.FailureMessage,
		Created:        o.CreationTimestamp.Time,
		Deleting:       o.DeletionTimestamp != nil,
	}
	if a.phase() == AddonFailed {
		a.FailedSince = lastStatusWrite(o.ManagedFields)
	}
	return a, nil
}

// phase is the addon's phase with the provider's default filled in.
func (a Addon) phase() string {
	if a.Phase == "" {
		return AddonUnknown
	}
	return a.Phase
}

func (a Addon) id() string { return a.Kind + " " + a.Name }

// lastStatusWrite is the newest time any manager wrote the status subresource.
func lastStatusWrite(fields []metav1.ManagedFieldsEntry) time.Time {
	var t time.Time
	for _, f := range fields {
		if f.Subresource == "status" && f.Time != nil && f.Time.After(t) {
			t = f.Time.Time
		}
	}
	return t
}
