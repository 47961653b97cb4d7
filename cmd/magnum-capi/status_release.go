package main

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/magnum-capi/magnum-capi/capistatus"
)

// releaseInstalled answers --release-installed. "auto" reads Helm's own
// storage when the operator dumped it: release Secrets (labels owner=helm,
// name=<release>); a release is installed while one of its revisions is not
// "uninstalled" (helm uninstall --keep-history). Without any Helm Secret in
// DIR, the release counts as installed while the Cluster exists and is not
// being deleted, because `helm uninstall` is what deletes the Cluster.
func releaseInstalled(flagValue, stackID string, objs []*unstructured.Unstructured, snap capistatus.Snapshot) (bool, error) {
	switch flagValue {
	case "true":
		return true, nil
	case "false":
		return false, nil
	case "auto":
	default:
		return false, fmt.Errorf("--release-installed: %q, expected true, false or auto", flagValue)
	}
	sawHelm := false
	for _, o := range objs {
		if o.GetAPIVersion() != "v1" || o.GetKind() != "Secret" || o.GetLabels()["owner"] != "helm" {
			continue
		}
		sawHelm = true
		if l := o.GetLabels(); l["name"] == stackID && l["status"] != "uninstalled" {
			return true, nil
		}
	}
	if sawHelm {
		return false, nil
	}
	return snap.Cluster != nil && snap.Cluster.DeletionTimestamp == nil, nil
}
