package capisim

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/kubeconfig"
	"sigs.k8s.io/cluster-api/util/secret"
)

var gvkKCP = controlplanev1.GroupVersion.WithKind("KubeadmControlPlane")

// keyAlgorithm is the key type of the certificates the simulator makes:
// the control plane's choice, else ECDSA P-256. (KCP defaults to RSA-2048;
// generating those for hundreds of clusters on two cores would dominate a
// load test, and nothing here checks the key type.)
func keyAlgorithm(kcp *controlplanev1.KubeadmControlPlane) bootstrapv1.EncryptionAlgorithmType {
	if a := kcp.Spec.KubeadmConfigSpec.ClusterConfiguration.EncryptionAlgorithm; a != "" {
		return a
	}
	return bootstrapv1.EncryptionAlgorithmECDSAP256
}

// ensureCertificates does what KCP does with the cluster CA Secrets: keep
// those that exist (the driver creates them), generate the missing ones,
// and make the control plane their owner (controller) when they are of
// CAPI's Secret type or already controlled by a control plane. Uses CAPI's
// own certificate code.
func (s *Simulator) ensureCertificates(ctx context.Context, cluster *clusterv1.Cluster, kcp *controlplanev1.KubeadmControlPlane) error {
	if _, done := s.certsDone.Load(kcp.UID); done {
		return nil
	}
	cfg := kcp.Spec.KubeadmConfigSpec.ClusterConfiguration.DeepCopy()
	cfg.EncryptionAlgorithm = keyAlgorithm(kcp)
	certificates := secret.NewCertificatesForInitialControlPlane(cfg)
	owner := ownerRefTo(kcp, gvkKCP, true)
	if err := certificates.LookupOrGenerate(ctx, s.direct, client.ObjectKeyFromObject(cluster), owner); err != nil {
		return fmt.Errorf("cluster certificates of %s: %w", cluster.Name, err)
	}
	for _, c := range certificates {
		if c.Secret == nil {
			continue
		}
		if err := s.adoptClusterSecret(ctx, c.Secret, kcp); err != nil {
			return err
		}
	}
	s.certsDone.Store(kcp.UID, true)
	return nil
}

// adoptClusterSecret makes the control plane the controller of a Secret of
// CAPI's type or one a control plane controls, as KCP's
// ensureCertificatesOwnerRef and adoptKubeconfigSecret do.
func (s *Simulator) adoptClusterSecret(ctx context.Context, sec *corev1.Secret, kcp *controlplanev1.KubeadmControlPlane) error {
	controller := metav1.GetControllerOf(sec)
	if sec.Type != clusterv1.ClusterSecretType && (controller == nil || controller.Kind != "KubeadmControlPlane") {
		return nil
	}
	owner := ownerRefTo(kcp, gvkKCP, true)
	original := sec.DeepCopy()
	var refs []metav1.OwnerReference
	for _, r := range sec.OwnerReferences {
		if r.Controller != nil && *r.Controller && r.UID != kcp.UID {
			continue // another controller is replaced
		}
		refs = append(refs, r)
	}
	refs, _ = withOwnerRef(refs, owner)
	sec.OwnerReferences = refs
	if equalOwnerRefs(original.OwnerReferences, sec.OwnerReferences) {
		return nil
	}
	return s.direct.Patch(ctx, sec, client.MergeFrom(original))
}

func equalOwnerRefs(a, b []metav1.OwnerReference) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].UID != b[i].UID || !ptrEq(a[i].Controller, b[i].Controller) || a[i].APIVersion != b[i].APIVersion {
			return false
		}
	}
	return true
}

// ensureKubeconfig creates the <cluster>-kubeconfig Secret (key "value")
// pointing at the control plane endpoint, signed by the cluster CA, owned
// by the control plane, with CAPI's own kubeconfig code.
func (s *Simulator) ensureKubeconfig(ctx context.Context, cluster *clusterv1.Cluster, kcp *controlplanev1.KubeadmControlPlane) error {
	if _, done := s.kubeconfigDone.Load(kcp.UID); done {
		return nil
	}
	if err := s.createKubeconfig(ctx, cluster, kcp); err != nil {
		return err
	}
	s.kubeconfigDone.Store(kcp.UID, true)
	return nil
}

func (s *Simulator) createKubeconfig(ctx context.Context, cluster *clusterv1.Cluster, kcp *controlplanev1.KubeadmControlPlane) error {
	sec := &corev1.Secret{}
	err := s.direct.Get(ctx, types.NamespacedName{Namespace: cluster.Namespace, Name: secret.Name(cluster.Name, secret.Kubeconfig)}, sec)
	switch {
	case err == nil:
		return s.adoptClusterSecret(ctx, sec, kcp)
	case !apierrors.IsNotFound(err):
		return err
	}
	err = kubeconfig.CreateSecretWithOwner(ctx, s.direct, client.ObjectKeyFromObject(cluster),
		cluster.Spec.ControlPlaneEndpoint.String(), ownerRefTo(kcp, gvkKCP, true),
		kubeconfig.KeyEncryptionAlgorithm(keyAlgorithm(kcp)))
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("kubeconfig of %s: %w", cluster.Name, err)
	}
	return nil
}
