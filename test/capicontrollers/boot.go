package capicontrollers

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cloudv1 "sigs.k8s.io/cluster-api/test/infrastructure/inmemory/pkg/cloud/api/v1alpha1"
	inmemoryruntime "sigs.k8s.io/cluster-api/test/infrastructure/inmemory/pkg/runtime"
	"sigs.k8s.io/cluster-api/util/secret"
)

// What a server does when it boots with kubeadm's cloud-init: the kubelet
// registers its Node (with the provider ID the cloud controller manager
// would set), and on a control plane machine kubeadm starts etcd (joining
// the cluster's members), the API server, the scheduler and the controller
// manager as static pods and writes its cluster objects. Everything lands
// in the cluster's in-memory workload cluster, where Cluster API's
// controllers read it, as they would from a real one.

// bootSpec is one server booting.
type bootSpec struct {
	cluster        string // clusterKey of its Cluster
	namespace      string // the Cluster's namespace in the management cluster
	clusterName    string
	node           string // the Node name: the server's name
	providerID     string
	kubeletVersion string
	controlPlane   bool
	addresses      []corev1.NodeAddress
}

// bootStatic pods a control plane machine runs, by kubeadm's names.
var controlPlaneComponents = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"}

func staticPodName(component, node string) string { return component + "-" + node }

// boot registers the Node and, on a control plane machine, starts its
// components. Idempotent: a retried boot finds what it made.
func (p *Provider) boot(ctx context.Context, b bootSpec) error {
	wc := p.workloads.client(b.cluster)
	if b.controlPlane {
		// kubeadm init/join: etcd first, then the API server, which is
		// what makes the cluster (and the Node) reachable.
		if err := p.startEtcd(ctx, wc, b); err != nil {
			return err
		}
		if err := p.startAPIServer(ctx, wc, b); err != nil {
			return err
		}
		for _, component := range controlPlaneComponents[2:] {
			if err := createIfMissing(ctx, wc, staticPod(component, b.node)); err != nil {
				return err
			}
		}
		if err := writeKubeadmObjects(ctx, wc, b); err != nil {
			return err
		}
	}
	return createIfMissing(ctx, wc, newNode(b))
}

func newNode(b bootSpec) *corev1.Node {
	now := metav1.Now()
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: b.node, Labels: map[string]string{"kubernetes.io/hostname": b.node}},
		Spec:       corev1.NodeSpec{ProviderID: b.providerID},
		Status: corev1.NodeStatus{
			Addresses: b.addresses,
			NodeInfo:  corev1.NodeSystemInfo{KubeletVersion: b.kubeletVersion, OperatingSystem: "linux", Architecture: "amd64"},
			Conditions: []corev1.NodeCondition{
				{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", Message: "kubelet is posting ready status", LastTransitionTime: now, LastHeartbeatTime: now},
				{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientMemory", LastTransitionTime: now, LastHeartbeatTime: now},
				{Type: corev1.NodeDiskPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasNoDiskPressure", LastTransitionTime: now, LastHeartbeatTime: now},
				{Type: corev1.NodePIDPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientPID", LastTransitionTime: now, LastHeartbeatTime: now},
			},
		},
	}
	if b.controlPlane {
		node.Labels["node-role.kubernetes.io/control-plane"] = ""
		node.Spec.Taints = []corev1.Taint{{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}}
	}
	return node
}

func staticPod(component, node string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: metav1.NamespaceSystem, Name: staticPodName(component, node),
			Labels: map[string]string{"component": component, "tier": "control-plane"},
		},
		Spec: corev1.PodSpec{NodeName: node},
		Status: corev1.PodStatus{
			Phase:      corev1.PodRunning,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
		},
	}
}

// startEtcd adds the machine's etcd member: a pod annotated with the
// cluster's etcd cluster ID and a member ID (Cluster API's in-memory etcd
// answers MemberList and Status from these annotations), the first member
// being the leader; and a serving certificate from the etcd CA.
func (p *Provider) startEtcd(ctx context.Context, wc inmemoryruntime.Client, b bootSpec) error {
	pod := staticPod("etcd", b.node)
	if err := wc.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
		if !apierrors.IsNotFound(err) {
			return err
		}
		clusterID, members, hasLeader, err := etcdMembers(ctx, wc)
		if err != nil {
			return err
		}
		if clusterID == "" {
			clusterID = strconv.FormatUint(uint64(rand.Uint32()|1), 10)
		}
		memberID := ""
		for memberID == "" || members[memberID] {
			memberID = strconv.FormatUint(uint64(rand.Uint32()|1), 10)
		}
		pod.Annotations = map[string]string{
			cloudv1.EtcdClusterIDAnnotationName: clusterID,
			cloudv1.EtcdMemberIDAnnotationName:  memberID,
		}
		if !hasLeader {
			pod.Annotations[cloudv1.EtcdLeaderFromAnnotationName] = time.Now().Format(time.RFC3339)
		}
		if err := wc.Create(ctx, pod); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating etcd pod %s: %w", pod.Name, err)
		}
	}
	if p.workloads.mux.HasEtcdMember(b.cluster, pod.Name) {
		return nil
	}
	ca, key, err := readCA(ctx, p.direct, b.namespace, b.clusterName, secret.EtcdCA)
	if err != nil {
		return err
	}
	return p.workloads.mux.AddEtcdMember(b.cluster, pod.Name, ca, key)
}

// etcdMembers reads the etcd cluster's ID, its live members' IDs and
// whether one of them leads.
func etcdMembers(ctx context.Context, wc inmemoryruntime.Client) (clusterID string, members map[string]bool, hasLeader bool, err error) {
	pods := &corev1.PodList{}
	if err := wc.List(ctx, pods, client.InNamespace(metav1.NamespaceSystem), client.MatchingLabels{"component": "etcd", "tier": "control-plane"}); err != nil {
		return "", nil, false, fmt.Errorf("listing etcd members: %w", err)
	}
	members = map[string]bool{}
	for _, pod := range pods.Items {
		if _, removed := pod.Annotations[cloudv1.EtcdMemberRemoved]; removed {
			continue
		}
		clusterID = pod.Annotations[cloudv1.EtcdClusterIDAnnotationName]
		members[pod.Annotations[cloudv1.EtcdMemberIDAnnotationName]] = true
		if pod.Annotations[cloudv1.EtcdLeaderFromAnnotationName] != "" {
			hasLeader = true
		}
	}
	return clusterID, members, hasLeader, nil
}

// startAPIServer adds the machine's API server behind the cluster's
// listener, with a serving certificate from the cluster CA.
func (p *Provider) startAPIServer(ctx context.Context, wc inmemoryruntime.Client, b bootSpec) error {
	pod := staticPod("kube-apiserver", b.node)
	if err := createIfMissing(ctx, wc, pod); err != nil {
		return err
	}
	ca, key, err := readCA(ctx, p.direct, b.namespace, b.clusterName, secret.ClusterCA)
	if err != nil {
		return err
	}
	return p.workloads.addAPIServer(b.cluster, pod.Name, ca, key)
}

// writeKubeadmObjects are what kubeadm init leaves in the cluster and the
// control plane controller reads or updates: the kubeadm-config ConfigMap,
// the RBAC for joining nodes, kube-proxy and CoreDNS.
func writeKubeadmObjects(ctx context.Context, wc inmemoryruntime.Client, b bootSpec) error {
	objs := []client.Object{
		&rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: "kubeadm:get-nodes"},
			Rules:      []rbacv1.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"nodes"}}},
		},
		&rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "kubeadm:get-nodes"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "kubeadm:get-nodes"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.GroupKind, Name: "system:bootstrappers:kubeadm:default-node-token"}},
		},
		&corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceSystem, Name: "kubeadm-config"},
			Data:       map[string]string{"ClusterConfiguration": ""},
		},
		&appsv1.DaemonSet{
			ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceSystem, Name: "kube-proxy", Labels: map[string]string{"k8s-app": "kube-proxy"}},
			Spec: appsv1.DaemonSetSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "kube-proxy", Image: "registry.k8s.io/kube-proxy:" + b.kubeletVersion}},
			}}},
		},
		&corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceSystem, Name: "coredns"},
			Data:       map[string]string{"Corefile": ".:53 {\n    errors\n    kubernetes cluster.local in-addr.arpa ip6.arpa\n    forward . /etc/resolv.conf\n}\n"},
		},
		&appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceSystem, Name: "coredns", Labels: map[string]string{"k8s-app": "kube-dns"}},
			Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "coredns", Image: "registry.k8s.io/coredns/coredns:v1.12.0"}},
			}}},
		},
	}
	for _, o := range objs {
		if err := createIfMissing(ctx, wc, o); err != nil {
			return err
		}
	}
	return nil
}

// shutdown is the server going away: its Node, static pods, etcd member and
// API server disappear from the workload cluster. Idempotent.
func (p *Provider) shutdown(ctx context.Context, key, node string, controlPlane bool) error {
	if !p.workloads.exists(key) {
		return nil
	}
	wc := p.workloads.client(key)
	if err := deleteIfPresent(ctx, wc, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}); err != nil {
		return err
	}
	if !controlPlane {
		return nil
	}
	for _, component := range controlPlaneComponents {
		if err := deleteIfPresent(ctx, wc, staticPod(component, node)); err != nil {
			return err
		}
	}
	if err := p.workloads.mux.DeleteEtcdMember(key, staticPodName("etcd", node)); err != nil {
		return err
	}
	return p.workloads.deleteAPIServer(key, staticPodName("kube-apiserver", node))
}

func createIfMissing(ctx context.Context, wc inmemoryruntime.Client, obj client.Object) error {
	if err := wc.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating %T %s in the workload cluster: %w", obj, obj.GetName(), err)
	}
	return nil
}

func deleteIfPresent(ctx context.Context, wc inmemoryruntime.Client, obj client.Object) error {
	if err := wc.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting %T %s in the workload cluster: %w", obj, obj.GetName(), err)
	}
	return nil
}
