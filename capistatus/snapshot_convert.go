package capistatus

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// convertCAPI converts a CAPI object at v1beta2, or at v1beta1 through the
// scheme's conversions, into out (v1beta2). old is an empty v1beta1 object of
// the same kind.
func (p *picker) convertCAPI(o *unstructured.Unstructured, out, old runtime.Object) bool {
	var err error
	switch o.GroupVersionKind().Version {
	case "v1beta2":
		err = fromUnstructured(o.Object, out)
	case "v1beta1":
		if err = fromUnstructured(o.Object, old); err == nil {
			err = convertSafely(p.scheme, old, out)
			copyClusterRefs(old, out)
		}
	default:
		err = fmt.Errorf("apiVersion %q is not supported, expected %s/v1beta2 (or v1beta1)", o.GetAPIVersion(), o.GroupVersionKind().Group)
	}
	if err != nil {
		p.errs = append(p.errs, p.objErr(o, err))
		return false
	}
	if meta, ok := out.(interface{ GetName() string }); ok && meta.GetName() == "" {
		p.errs = append(p.errs, p.objErr(o, errors.New("metadata.name is empty")))
		return false
	}
	return true
}

// copyClusterRefs carries a v1beta1 Cluster's object references over: the
// generated conversions leave them to CAPI's hub converter, which lives with
// controller-runtime and so cannot be used here. Status derivation needs the
// names (and the group, to know the kind).
func copyClusterRefs(old, out runtime.Object) {
	in, ok1 := old.(*clusterv1beta1.Cluster)
	c, ok2 := out.(*clusterv1.Cluster)
	if !ok1 || !ok2 {
		return
	}
	conv := func(r *corev1.ObjectReference) clusterv1.ContractVersionedObjectReference {
		if r == nil {
			return clusterv1.ContractVersionedObjectReference{}
		}
		return clusterv1.ContractVersionedObjectReference{APIGroup: r.GroupVersionKind().Group, Kind: r.Kind, Name: r.Name}
	}
	if c.Spec.ControlPlaneRef.Name == "" {
		c.Spec.ControlPlaneRef = conv(in.Spec.ControlPlaneRef)
	}
	if c.Spec.InfrastructureRef.Name == "" {
		c.Spec.InfrastructureRef = conv(in.Spec.InfrastructureRef)
	}
}

// convertSafely runs a scheme conversion; generated conversions index into
// their input, and a panic there must not take the sidecar down.
func convertSafely(s *runtime.Scheme, in, out runtime.Object) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("cannot be converted to v1beta2: %v", r)
		}
	}()
	if err := s.Convert(in, out, nil); err != nil {
		return fmt.Errorf("cannot be converted to v1beta2: %w", err)
	}
	return nil
}

// replicaFields are named replica counts of one object.
type replicaFields []struct {
	field string
	value *int32
}

// validReplicas rejects negative replica counts, which no controller writes
// and which would otherwise read as "more ready than desired".
func (p *picker) validReplicas(o *unstructured.Unstructured, fields replicaFields) bool {
	ok := true
	for _, f := range fields {
		if f.value != nil && *f.value < 0 {
			p.errs = append(p.errs, p.objErr(o, fmt.Errorf("%s: %d, expected 0 or more", f.field, *f.value)))
			ok = false
		}
	}
	return ok
}
