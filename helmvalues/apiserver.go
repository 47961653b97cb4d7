package helmvalues

import (
	"crypto/tls"
	"fmt"
	"net/netip"
	"sort"
	"strings"
)

// groupAPIServer holds the labels of the API server's endpoint (its load
// balancer and addresses) and of the control plane's security settings.
const groupAPIServer = "API server endpoint and control-plane security"

// postRendered is how the registry names a setting chart 0.27 has no value
// for and the sidecar's Helm post-renderer writes into the rendered object.
func postRendered(kind, field string) string {
	return fmt.Sprintf("(no chart value: %s %s, written by the sidecar's Helm post-renderer)", kind, field)
}

// apiServerLabelSpecs are the registry entries of groupAPIServer.
var apiServerLabelSpecs = []labelSpec{
	{
		Name: "api_server_floating_ip", Group: groupAPIServer, Type: ipv4Type,
		Keys: []string{"apiServer.floatingIP"},
		Doc: "An existing floating IP of the cluster's project (its address) for the API server load balancer, " +
			"instead of a new one. Needs master_lb_floating_ip_enabled (the default). A create is refused, before " +
			"anything is made, unless Neutron has this floating IP in the cluster's project and it is attached to no " +
			"port (other than the cluster's own load balancer's, when a create is retried). " + fixedAtCreate,
		Valid: []string{"203.0.113.10"}, Invalid: []string{"203.0.113.300", "2001:db8::10", "api.example.com"},
	},
	{
		Name: "api_server_fixed_ip", Group: groupAPIServer, Type: ipType,
		Keys: []string{"apiServer.fixedIP"},
		Doc: "Fixed IP (the VIP) of the API server load balancer on the cluster network. On a network the cluster " +
			"creates it must be a host address inside fixed_subnet_cidr. " + fixedAtCreate,
		Valid: []string{"10.0.0.250"}, Invalid: []string{"10.0.0.0/24", "10.0.0.256"},
	},
	{
		Name: "api_server_lb_flavor", Group: groupAPIServer, Type: chartNameType,
		Keys: []string{postRendered("OpenStackCluster", "spec.apiServerLoadBalancer.flavor")},
		Doc: "Octavia flavor (name) of the API server load balancer; unset, Octavia's default. Chart " + ChartVersion +
			" has no value for it. " + fixedAtCreate,
		Valid: []string{"amphora-ha"}, Invalid: []string{"ha: yes"},
	},
	{
		Name: "api_server_lb_availability_zone", Group: groupAPIServer, Type: chartNameType,
		Keys: []string{postRendered("OpenStackCluster", "spec.apiServerLoadBalancer.availabilityZone")},
		Doc: "Octavia availability zone of the API server load balancer; unset, Octavia's default. Chart " + ChartVersion +
			" has no value for it. " + fixedAtCreate,
		Valid: []string{"az-1"}, Invalid: []string{"true"},
	},
	{
		Name: "api_server_tls_cipher_suites", Group: groupAPIServer, Type: cipherSuitesType,
		Keys: []string{"controlPlane.kubeadmConfigSpec.clusterConfiguration.apiServer.extraArgs.tls-cipher-suites"},
		Doc: "TLS 1.2 cipher suites the API server accepts (`--tls-cipher-suites`), by their Go and Kubernetes names; " +
			"unset, Go's defaults. Insecure suites are refused, and the list must hold " + http2Suites +
			", which HTTP/2 requires. TLS 1.3 suites are always on and cannot be chosen.",
		Valid:   []string{"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"},
		Invalid: []string{"TLS_RSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "ECDHE-RSA-AES128-GCM-SHA256"},
	},
	{
		Name: "kubelet_tls_cipher_suites", Group: groupAPIServer, Type: cipherSuitesType,
		Keys: []string{"controlPlane.kubeadmConfigSpec.{init,join}Configuration.nodeRegistration.kubeletExtraArgs.tls-cipher-suites",
			"nodeGroupDefaults.kubeadmConfigSpec.joinConfiguration.nodeRegistration.kubeletExtraArgs.tls-cipher-suites"},
		Doc: "TLS 1.2 cipher suites of every node's kubelet server (`--tls-cipher-suites`), as " +
			"api_server_tls_cipher_suites. Changing it replaces the machines.",
		Valid:   []string{"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305"},
		Invalid: []string{"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_RSA_WITH_3DES_EDE_CBC_SHA"},
	},
	{
		Name: "control_plane_certificates_expiry_days", Group: groupAPIServer, Type: certificatesExpiryDaysType,
		DefaultDoc: "`21` for a cluster this driver creates; `0` (off) for one deployed without it (created by an earlier " +
			"version of this driver, or adopted from StackHPC's)",
		Keys: []string{postRendered("KubeadmControlPlane", "spec.rolloutBefore.certificatesExpiryDays (v1beta2: spec.rollout.before.certificatesExpiryDays)")},
		Doc: "Replace control plane machines when their certificates expire within this many days, so a cluster " +
			"nobody upgrades keeps a working control plane (kubeadm's certificates last a year). 0 turns it off. " +
			"Unless a template, the cluster or the site (`values.labelDefaults`) sets it, a new cluster gets 21 days, " +
			"as the VEXXHOST driver's do, and keeps that default for its life (the sidecar records it on the cluster's " +
			"Helm release when it creates the cluster); a cluster deployed without that record keeps it off, so a resize " +
			"of an existing or adopted cluster does not change its control plane. " +
			"The chart's next release calls it `controlPlane.certificatesExpiryDays`.",
		Valid: []string{"30", "0"}, Invalid: []string{"3", "365", "soon"},
	},
	{
		Name: "etcd_encryption_enabled", Group: groupAPIServer, Type: boolType, Default: "false",
		Keys: []string{"etcd.encryption.enabled"},
		Doc: "Encrypt Secrets at rest in etcd (the API server's secretbox provider). The sidecar makes the key, " +
			"32 random bytes, once, in the Secret `<stack_id>-etcd-key` beside the cluster's other Secrets, and " +
			"never replaces it. Once a cluster has it, it keeps it: turning it off would leave the API server " +
			"unable to read the Secrets written meanwhile, so a later `false` changes nothing.",
		Valid: []string{"true"}, Invalid: []string{"secretbox"},
	},
}

// fixedAtCreate is what the endpoint's labels say of a change
// (apiendpoint.go).
const fixedAtCreate = "Fixed when the cluster is created: an update or upgrade that changes it is refused before " +
	"anything is written (CAPO refuses a change of the OpenStackCluster's API server addresses, and another load " +
	"balancer flavor or zone would rebuild the load balancer under every kubeconfig)."

// http2Suites are the suites one of which Go's HTTP/2 server requires when
// the cipher suites are chosen (x/net/http2 ConfigureServer): without one,
// kube-apiserver and kubelet do not start.
const http2Suites = "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 or TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"

// cipherSuiteAliases are the older names Kubernetes also accepts.
var cipherSuiteAliases = map[string]string{
	"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305":   "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
	"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305": "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
}

// cipherSuiteType accepts the name of a cipher suite Go implements for TLS
// 1.2 and does not call insecure: what kube-apiserver and kubelet accept,
// less what a tenant should not be able to turn on.
var cipherSuiteType = valueType{
	Doc: "TLS 1.2 cipher suite names as Go and Kubernetes spell them",
	parse: func(raw string) (any, string) {
		name := strings.TrimSpace(raw)
		if canonical, ok := cipherSuiteAliases[name]; ok {
			name = canonical
		}
		for _, s := range tls.InsecureCipherSuites() {
			if s.Name == name {
				return nil, "a secure cipher suite (" + name + " is insecure)"
			}
		}
		var tls12 []string
		for _, s := range tls.CipherSuites() {
			for _, v := range s.SupportedVersions {
				if v == tls.VersionTLS12 {
					tls12 = append(tls12, s.Name)
					break
				}
			}
		}
		for _, known := range tls12 {
			if known == name {
				return name, ""
			}
		}
		sort.Strings(tls12)
		return nil, "a TLS 1.2 cipher suite name: one of " + strings.Join(tls12, ", ")
	},
}

// cipherSuitesType is a list of cipher suites holding one HTTP/2 accepts.
var cipherSuitesType = func() valueType {
	list := listType(",", cipherSuiteType)
	return valueType{
		Doc: list.Doc + ", with " + http2Suites + " among them",
		parse: func(raw string) (any, string) {
			v, msg := list.parse(raw)
			if msg != "" {
				return nil, msg
			}
			for _, name := range v.([]string) {
				if strings.HasSuffix(name, "_WITH_AES_128_GCM_SHA256") && strings.HasPrefix(name, "TLS_ECDHE_") {
					return v, ""
				}
			}
			return nil, "a list of cipher suites including " + http2Suites + " (HTTP/2 requires one)"
		},
	}
}()

// certificatesExpiryDaysType: KubeadmControlPlane accepts 7 days or more;
// from a year on (kubeadm's certificate lifetime) machines would be
// replaced without end, and half a year is plenty of warning.
var certificatesExpiryDaysType = valueType{
	Doc: "integer: 0 (off) or 7–180 days",
	parse: func(raw string) (any, string) {
		v, msg := intType(0, 180).parse(raw)
		if msg != "" || (v.(int) > 0 && v.(int) < 7) {
			return nil, "0 (off) or an integer 7–180 (days; Cluster API's minimum is 7, kubeadm's certificates last 365)"
		}
		return v, ""
	},
}

var ipType = valueType{
	Doc: "IP address",
	parse: func(raw string) (any, string) {
		addr, err := netip.ParseAddr(strings.TrimSpace(raw))
		if err != nil || addr.Zone() != "" {
			return nil, "an IP address such as 10.0.0.250"
		}
		return addr.String(), ""
	},
}

// ipv4Type: Neutron's floating IPs are IPv4 addresses.
var ipv4Type = valueType{
	Doc: "IPv4 address",
	parse: func(raw string) (any, string) {
		addr, err := netip.ParseAddr(strings.TrimSpace(raw))
		if err != nil || !addr.Is4() {
			return nil, "an IPv4 address such as 203.0.113.10 (floating IPs are IPv4)"
		}
		return addr.String(), ""
	},
}

// SpecPatch is a setting chart 0.27 has no value for: Spec is merged into
// the spec of every object of Kind in API group Group (and API version
// Version, when not empty) the release renders (maps key by key, anything
// else replaced), by the sidecar's Helm post-renderer, so it is part of
// every revision.
type SpecPatch struct {
	Group, Version, Kind string
	Spec                 map[string]any
}

const (
	openStackClusterGroup = "infrastructure.cluster.x-k8s.io"
	controlPlaneGroup     = "controlplane.cluster.x-k8s.io"
)

// apiServerEndpoint maps the API server's addresses and load balancer
// settings; it runs after clusterNetworking and apiServer.
func (b *builder) apiServerEndpoint() {
	if fip := b.labels.str("api_server_floating_ip"); fip != "" {
		if !b.labels.boolean("master_lb_floating_ip_enabled") {
			b.p.field("labels.api_server_floating_ip", fip, "no floating IP while master_lb_floating_ip_enabled is false")
		} else {
			put(b.values, fip, "apiServer", "floatingIP")
		}
	}
	if vip := b.labels.str("api_server_fixed_ip"); vip != "" {
		if msg := hostInNetwork(vip, b.nodeCIDR); msg != "" && !b.hasFixedNw {
			b.p.field("labels.api_server_fixed_ip", vip, msg)
		} else {
			put(b.values, vip, "apiServer", "fixedIP")
		}
	}
	lb := map[string]any{}
	if flavor := b.labels.str("api_server_lb_flavor"); flavor != "" {
		lb["flavor"] = flavor
	}
	if zone := b.labels.str("api_server_lb_availability_zone"); zone != "" {
		lb["availabilityZone"] = zone
	}
	if len(lb) > 0 {
		b.specPatches = append(b.specPatches, SpecPatch{Group: openStackClusterGroup, Kind: "OpenStackCluster",
			Spec: map[string]any{"apiServerLoadBalancer": lb}})
	}
}

// hostInNetwork says what is wrong with addr as a host of cidr ("" when
// cidr is unknown).
func hostInNetwork(addr, cidr string) string {
	prefix, err := netip.ParsePrefix(cidr)
	if err != nil {
		return ""
	}
	ip, err := netip.ParseAddr(addr)
	if err != nil || !prefix.Contains(ip) || ip == prefix.Addr() || (ip.Is4() && ip == lastAddr(prefix)) {
		return fmt.Sprintf("a host address inside the cluster network %s (label fixed_subnet_cidr)", cidr)
	}
	return ""
}

// lastAddr is the broadcast address of an IPv4 prefix.
func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().As4()
	host := 32 - p.Bits()
	for i := 3; i >= 0 && host > 0; i-- {
		n := min(host, 8)
		b[i] |= byte(1<<n - 1)
		host -= n
	}
	return netip.AddrFrom4(b)
}

// controlPlaneSecurity maps the TLS cipher suites, the certificate renewal
// and etcd encryption; it runs after controlPlane and nodeGroups.
func (b *builder) controlPlaneSecurity() {
	if suites := b.labels.list("api_server_tls_cipher_suites"); len(suites) > 0 {
		put(b.values, strings.Join(suites, ","), "controlPlane", "kubeadmConfigSpec", "clusterConfiguration", "apiServer", "extraArgs", "tls-cipher-suites")
	}
	if suites := b.labels.list("kubelet_tls_cipher_suites"); len(suites) > 0 {
		joined := strings.Join(suites, ",")
		for _, phase := range []string{"initConfiguration", "joinConfiguration"} {
			put(b.values, joined, "controlPlane", "kubeadmConfigSpec", phase, "nodeRegistration", "kubeletExtraArgs", "tls-cipher-suites")
		}
		put(b.values, joined, "nodeGroupDefaults", "kubeadmConfigSpec", "joinConfiguration", "nodeRegistration", "kubeletExtraArgs", "tls-cipher-suites")
	}
	days, _ := b.labels.integer("control_plane_certificates_expiry_days")
	b.specPatches = append(b.specPatches, CertificatesExpiryPatches(days)...)
	if b.labels.boolean("etcd_encryption_enabled") {
		put(b.values, true, "etcd", "encryption", "enabled")
	}
}

// DefaultCertificatesExpiryDays is control_plane_certificates_expiry_days
// for a cluster created now when no label or site default sets it. Which
// default a cluster has depends on its deployed release, which Build does
// not see: Build renders only a value that is set
// (Result.CertificatesExpiryDaysSet), and the sidecar adds
// CertificatesExpiryPatches of the cluster's default otherwise.
const DefaultCertificatesExpiryDays = 21

// CertificatesExpiryPatches renew the control plane's certificates days
// before they expire; none when days is 0 (off).
func CertificatesExpiryPatches(days int) []SpecPatch {
	if days <= 0 {
		return nil
	}
	// v1beta2 moved the field; a chart rendering v1beta2 gets it there.
	return []SpecPatch{
		{Group: controlPlaneGroup, Version: "v1beta1", Kind: "KubeadmControlPlane",
			Spec: map[string]any{"rolloutBefore": map[string]any{"certificatesExpiryDays": days}}},
		{Group: controlPlaneGroup, Version: "v1beta2", Kind: "KubeadmControlPlane",
			Spec: map[string]any{"rollout": map[string]any{"before": map[string]any{"certificatesExpiryDays": days}}}},
	}
}

// EtcdEncryptionKeySecret is the Secret whose data key "key" holds the
// cluster's etcd encryption key: the name chart 0.27 reads it from.
func EtcdEncryptionKeySecret(stackID string) string { return stackID + "-etcd-key" }

// EtcdEncryptionEnabled says whether values turn etcd encryption at rest on.
func EtcdEncryptionEnabled(values map[string]any) bool {
	on, _ := lookup(values, "etcd", "encryption", "enabled")
	enabled, _ := on.(bool)
	return enabled
}

// KeepEtcdEncryption turns etcd encryption on in values when the deployed
// values have it on, and says whether it did: once Secrets are encrypted,
// turning encryption off would leave the API server unable to read them.
func KeepEtcdEncryption(deployed, values map[string]any) bool {
	if !EtcdEncryptionEnabled(deployed) || EtcdEncryptionEnabled(values) {
		return false
	}
	put(values, true, "etcd", "encryption", "enabled")
	return true
}
