package e2e

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
	"github.com/magnum-capi/magnum-capi/test/openstackfake"
)

const (
	testCipherSuites = "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"
	testKubeletSuite = "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"
)

// TestAPIServerEndpointAndSecurity: one cluster with every label of the
// API server's endpoint and the control plane's security. The
// OpenStackCluster gets the fixed floating IP and VIP (chart values) and the
// load balancer's flavor and zone (the post-renderer); the
// KubeadmControlPlane renews certificates 30 days before they expire (the
// post-renderer) and configures the API server's cipher suites and
// encryption at rest, whose key Secret the sidecar made; every kubelet,
// control plane and workers, gets its cipher suites; the cluster comes up,
// and the control plane machine's KubeadmConfig carries it all, with the
// certificates' expiry KubeadmControlPlane read. A create retried once
// CAPO attached the floating IP to the load balancer passes; an update
// changing the endpoint is refused with nothing written. A later
// etcd_encryption_enabled=false keeps encryption and its key, the renewal
// without its label falls back to the cluster's default of 21 days, and
// neither replaces a control plane machine. Bad values on a new cluster
// are refused, naming each label and value, with nothing written, as is a
// floating IP Neutron does not have free in the cluster's project.
func TestAPIServerEndpointAndSecurity(t *testing.T) {
	t.Parallel()
	ns := projectNamespace()
	c := newCluster(t, "apiserver-sec", "v1.33.2", 1)
	for k, v := range map[string]string{
		"api_server_floating_ip": "203.0.113.77", "api_server_fixed_ip": "10.0.0.250",
		"api_server_lb_flavor": "amphora-ha", "api_server_lb_availability_zone": "az-2",
		"api_server_tls_cipher_suites": testCipherSuites, "kubelet_tls_cipher_suites": testKubeletSuite,
		"control_plane_certificates_expiry_days": "30", "etcd_encryption_enabled": "true",
	} {
		c.spec.Cluster.Labels[k] = v
	}
	fip := stack.OpenStack.AddFloatingIP(openstackfake.FloatingIP{Address: "203.0.113.77", ProjectID: c.spec.Cluster.ProjectId})
	stackID := c.create(t, driver)
	cleanupCluster(t, c)

	osc := capiObject(t, ns, stackID, "infrastructure.cluster.x-k8s.io", "v1beta1", "OpenStackCluster")
	expectFields(t, osc, map[string]any{
		"spec.apiServerFloatingIP":                    "203.0.113.77",
		"spec.apiServerFixedIP":                       "10.0.0.250",
		"spec.apiServerLoadBalancer.enabled":          true,
		"spec.apiServerLoadBalancer.flavor":           "amphora-ha",
		"spec.apiServerLoadBalancer.availabilityZone": "az-2",
	})
	key := etcdKey(t, ns, stackID)
	expectControlPlaneSecurity(t, capiObject(t, ns, stackID+"-control-plane", "controlplane.cluster.x-k8s.io", "v1beta1", "KubeadmControlPlane"))
	md := capiObject(t, ns, stackID+"-default-worker", "cluster.x-k8s.io", "v1beta1", "MachineDeployment")
	ref, _, _ := unstructured.NestedString(md.Object, "spec", "template", "spec", "bootstrap", "configRef", "name")
	expectFields(t, capiObject(t, ns, ref, "bootstrap.cluster.x-k8s.io", "v1beta1", "KubeadmConfigTemplate"), map[string]any{
		"spec.template.spec.joinConfiguration.nodeRegistration.kubeletExtraArgs.tls-cipher-suites": testKubeletSuite,
	})
	c.waitFor(t, "CREATE_COMPLETE", 4*time.Minute)
	config := expectControlPlaneKubeadmConfig(t, ns, stackID)
	expectCreateRetriedWithItsFloatingIP(t, c, fip)
	expectEndpointFixed(t, c)

	// Encryption stays on when the labels turn it off, with the same key;
	// without its label, certificate renewal falls back to the default the
	// cluster was created with (21 days), which replaces no machine.
	c.spec.Cluster.Labels["etcd_encryption_enabled"] = "false"
	delete(c.spec.Cluster.Labels, "control_plane_certificates_expiry_days")
	rctx, cancel := callCtx()
	_, err := driver.ResizeCluster(rctx, c.resizeRequest(1))
	cancel()
	if err != nil {
		t.Fatalf("ResizeCluster: %v", err)
	}
	expectFields(t, capiObject(t, ns, stackID+"-control-plane", "controlplane.cluster.x-k8s.io", "v1beta1", "KubeadmControlPlane"), map[string]any{
		"spec.kubeadmConfigSpec.clusterConfiguration.apiServer.extraArgs.encryption-provider-config": "/etc/kubernetes/enc/enc.yaml",
		"spec.rolloutBefore.certificatesExpiryDays":                                                  int64(21),
	})
	if again := etcdKey(t, ns, stackID); !bytes.Equal(again, key) {
		t.Error("the etcd encryption key changed")
	}
	c.waitFor(t, "UPDATE_COMPLETE", 4*time.Minute)
	if again := expectControlPlaneKubeadmConfig(t, ns, stackID); again != config {
		t.Errorf("the update replaced the control plane (KubeadmConfig %s, was %s)", again, config)
	}

	expectAPIServerRefusals(t)
	expectFloatingIPRefusals(t)
	c.remove(t, driver)
}

// expectCreateRetriedWithItsFloatingIP: once CAPO attached the floating IP
// to the cluster's load balancer, a retried create still passes the
// floating IP check.
func expectCreateRetriedWithItsFloatingIP(t *testing.T, c *cluster, fip openstackfake.FloatingIP) {
	t.Helper()
	stack.OpenStack.AttachFloatingIP(fip.ID, uuid.NewString(), "Octavia")
	ctx, cancel := callCtx()
	resp, err := driver.CreateCluster(ctx, &pb.CreateClusterRequest{Context: c.ctx, Spec: c.spec, Certificates: c.certs})
	cancel()
	if err != nil || resp.GetStackId() != c.spec.Cluster.StackId {
		t.Fatalf("retried CreateCluster: %v (stack_id %q, want %q)", err, resp.GetStackId(), c.spec.Cluster.StackId)
	}
}

// expectEndpointFixed: an update that changes the API server's endpoint
// is refused, naming the label, the deployed value and the requested one,
// and writes nothing.
func expectEndpointFixed(t *testing.T, c *cluster) {
	t.Helper()
	before := footprintOf(t, c.owner())
	for label, value := range map[string]string{"api_server_lb_flavor": "amphora-single", "api_server_floating_ip": "203.0.113.99"} {
		was := c.spec.Cluster.Labels[label]
		c.spec.Cluster.Labels[label] = value
		ctx, cancel := callCtx()
		_, err := driver.ResizeCluster(ctx, c.resizeRequest(1))
		cancel()
		c.spec.Cluster.Labels[label] = was
		expectRefusal(t, err, "label "+label, `"`+was+`"`, `"`+value+`"`, "fixed when the cluster is created")
	}
	c.setStatus("CREATE_COMPLETE")
	if diff := before.changes(footprintOf(t, c.owner())); len(diff) > 0 {
		t.Errorf("the refused updates changed the cluster:\n%s", strings.Join(diff, "\n"))
	}
}

// expectFloatingIPRefusals: a new cluster whose api_server_floating_ip is
// not a free floating IP of its project, as Neutron says, is refused
// before anything of it is written.
func expectFloatingIPRefusals(t *testing.T) {
	t.Helper()
	bad := newCluster(t, "apiserver-fip-refused", "v1.33.2", 1)
	stack.OpenStack.AddFloatingIP(openstackfake.FloatingIP{Address: "203.0.113.78", ProjectID: "0b1c2d3e4f5a4b6c8d9e0f1a2b3c4d5e"})
	stack.OpenStack.AddFloatingIP(openstackfake.FloatingIP{Address: "203.0.113.79", ProjectID: bad.spec.Cluster.ProjectId,
		PortID: "5d1f0c3a-8e4b-4f6a-9c2d-7b8e9f0a1b2c", PortOwner: "compute:nova"})
	before := footprintOf(t, bad.owner())
	for address, problem := range map[string]string{
		"203.0.113.78": "no floating IP with this address in the cluster's project", // another project's
		"203.0.113.80": "no floating IP with this address in the cluster's project", // no such floating IP
		"203.0.113.79": "attached to port 5d1f0c3a-8e4b-4f6a-9c2d-7b8e9f0a1b2c (compute:nova)",
	} {
		bad.spec.Cluster.Labels["api_server_floating_ip"] = address
		ctx, cancel := callCtx()
		_, err := driver.CreateCluster(ctx, &pb.CreateClusterRequest{Context: bad.ctx, Spec: bad.spec, Certificates: bad.certs})
		cancel()
		expectRefusal(t, err, "labels.api_server_floating_ip", `"`+address+`"`, "expected a free floating IP of the cluster's project", problem)
	}
	if diff := before.changes(footprintOf(t, bad.owner())); len(diff) > 0 {
		t.Errorf("the refused cluster changed:\n%s", strings.Join(diff, "\n"))
	}
}

// expectControlPlaneSecurity checks the KubeadmControlPlane the chart and
// the post-renderer wrote.
func expectControlPlaneSecurity(t *testing.T, kcp *unstructured.Unstructured) {
	t.Helper()
	expectFields(t, kcp, map[string]any{
		"spec.rolloutBefore.certificatesExpiryDays":                                                    int64(30),
		"spec.kubeadmConfigSpec.clusterConfiguration.apiServer.extraArgs.tls-cipher-suites":            testCipherSuites,
		"spec.kubeadmConfigSpec.clusterConfiguration.apiServer.extraArgs.encryption-provider-config":   "/etc/kubernetes/enc/enc.yaml",
		"spec.kubeadmConfigSpec.initConfiguration.nodeRegistration.kubeletExtraArgs.tls-cipher-suites": testKubeletSuite,
		"spec.kubeadmConfigSpec.joinConfiguration.nodeRegistration.kubeletExtraArgs.tls-cipher-suites": testKubeletSuite,
		"spec.kubeadmConfigSpec.initConfiguration.nodeRegistration.kubeletExtraArgs.cloud-provider":    "external",
	})
	files, _, _ := unstructured.NestedSlice(kcp.Object, "spec", "kubeadmConfigSpec", "files")
	found := false
	for _, f := range files {
		if m, _ := f.(map[string]any); m["path"] == "/etc/kubernetes/enc/enc.yaml" {
			found = strings.Contains(m["content"].(string), "secretbox")
		}
	}
	if !found {
		t.Error("the KubeadmControlPlane has no secretbox EncryptionConfiguration file")
	}
}

// expectControlPlaneKubeadmConfig: the kubeadm bootstrap provider's
// KubeadmConfig of the control plane machine carries the settings, and
// KubeadmControlPlane records its certificates' expiry there, far enough
// ahead that the renewal replaces nothing yet. It returns the config's name.
func expectControlPlaneKubeadmConfig(t *testing.T, ns, stackID string) string {
	t.Helper()
	var cfg *unstructured.Unstructured
	var expiry string
	_ = wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(schema.GroupVersionKind{Group: "bootstrap.cluster.x-k8s.io", Version: "v1beta1", Kind: "KubeadmConfigList"})
		if err := stack.Env.Client.List(ctx, list, client.InNamespace(ns),
			client.MatchingLabels{"cluster.x-k8s.io/cluster-name": stackID, "cluster.x-k8s.io/control-plane": ""}); err != nil || len(list.Items) != 1 {
			return false, nil
		}
		cfg = &list.Items[0]
		expiry = cfg.GetAnnotations()["machine.cluster.x-k8s.io/certificates-expiry"]
		return expiry != "", nil
	})
	if cfg == nil {
		t.Fatal("no single KubeadmConfig of the control plane")
	}
	expectFields(t, cfg, map[string]any{
		"spec.clusterConfiguration.apiServer.extraArgs.tls-cipher-suites":            testCipherSuites,
		"spec.initConfiguration.nodeRegistration.kubeletExtraArgs.tls-cipher-suites": testKubeletSuite,
	})
	if at, err := time.Parse(time.RFC3339, expiry); err != nil || time.Until(at) < 30*24*time.Hour {
		t.Errorf("control plane certificates expire at %q (%v), want a time more than 30 days ahead", expiry, err)
	}
	return cfg.GetName()
}

// expectAPIServerRefusals: a new cluster with bad values is refused with
// every problem named, and nothing of it is written.
func expectAPIServerRefusals(t *testing.T) {
	t.Helper()
	bad := newCluster(t, "apiserver-refused", "v1.33.2", 1)
	for k, v := range map[string]string{
		"api_server_floating_ip": "2001:db8::7", "api_server_fixed_ip": "10.9.0.1", "api_server_lb_flavor": "{a: b}",
		"api_server_tls_cipher_suites": "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_RSA_WITH_RC4_128_SHA",
		"kubelet_tls_cipher_suites":    "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "control_plane_certificates_expiry_days": "3",
		"etcd_encryption_enabled": "aes",
	} {
		bad.spec.Cluster.Labels[k] = v
	}
	before := footprintOf(t, bad.owner())
	ctx, cancel := callCtx()
	_, err := driver.CreateCluster(ctx, &pb.CreateClusterRequest{Context: bad.ctx, Spec: bad.spec, Certificates: bad.certs})
	cancel()
	for _, parts := range [][]string{
		{"labels.api_server_floating_ip", "2001:db8::7", "IPv4 address"},
		{"labels.api_server_fixed_ip", "10.9.0.1", "inside the cluster network"},
		{"labels.api_server_lb_flavor", "{a: b}", "plain name"},
		{"labels.api_server_tls_cipher_suites", "TLS_RSA_WITH_RC4_128_SHA", "is insecure"},
		{"labels.kubelet_tls_cipher_suites", "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "HTTP/2 requires one"},
		{"labels.control_plane_certificates_expiry_days", "3", "7–180"},
		{"labels.etcd_encryption_enabled", "aes", "boolean"},
	} {
		expectRefusal(t, err, parts...)
	}
	if diff := before.changes(footprintOf(t, bad.owner())); len(diff) > 0 {
		t.Errorf("the refused cluster changed:\n%s", strings.Join(diff, "\n"))
	}
}

// capiObject reads one object of the cluster's namespace.
func capiObject(t *testing.T, ns, name, group, version, kind string) *unstructured.Unstructured {
	t.Helper()
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(schema.GroupVersionKind{Group: group, Version: version, Kind: kind})
	if err := stack.Env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
		t.Fatalf("%s %s: %v", kind, name, err)
	}
	return obj
}

// expectFields checks obj's fields, by dotted path (keys hold no dots).
func expectFields(t *testing.T, obj *unstructured.Unstructured, want map[string]any) {
	t.Helper()
	for path, w := range want {
		got, _, err := unstructured.NestedFieldNoCopy(obj.Object, strings.Split(path, ".")...)
		if err != nil || got != w {
			t.Errorf("%s %s: %s = %v (%T), want %v", obj.GetKind(), obj.GetName(), path, got, got, w)
		}
	}
}

// etcdKey is the cluster's etcd encryption key, from the Secret the chart
// reads it from, which carries the cluster's labels.
func etcdKey(t *testing.T, ns, stackID string) []byte {
	t.Helper()
	secret := capiObject(t, ns, stackID+"-etcd-key", "", "v1", "Secret")
	data, _, _ := unstructured.NestedString(secret.Object, "data", "key")
	if len(data) != 44 { // base64 of 32 bytes
		t.Errorf("etcd key Secret: data.key is %d base64 characters, want 44", len(data))
	}
	if secret.GetLabels()["magnum.openstack.org/cluster-uuid"] == "" {
		t.Error("etcd key Secret has no cluster-uuid label")
	}
	return []byte(data)
}
