package helmvalues

import (
	"fmt"
	"regexp"
	"strings"
)

// Settings chart 0.27 has no values key for go through kubeadmConfigSpec,
// which the chart merges after its own fragments, concatenating lists (its
// mergeConcat helper). Only fixed text and validated values reach the files.

const (
	auditPolicyDir  = "/etc/kubernetes/audit-policy"
	auditPolicyFile = auditPolicyDir + "/audit-policy.yaml"
	auditLogDir     = "/var/log/kubernetes/audit"
	auditLogFile    = auditLogDir + "/kube-apiserver-audit.log"
)

// auditPolicy records who did what to which object (Metadata level) and never
// request or response bodies, which could hold Secrets; the noisiest
// read-only system traffic is left out.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages:
  - RequestReceived
rules:
  - level: None
    users: ["system:kube-proxy"]
    verbs: ["watch"]
  - level: None
    userGroups: ["system:nodes"]
    verbs: ["get", "watch", "list"]
  - level: None
    nonResourceURLs: ["/healthz*", "/livez*", "/readyz*", "/version", "/metrics"]
  - level: None
    resources:
      - group: "coordination.k8s.io"
        resources: ["leases"]
    verbs: ["get", "watch", "list", "update"]
  - level: Metadata
`

// controlPlaneKubeadm adds audit logging, certificate SANs, admission plugins
// and the container runtime proxy to the control plane's kubeadm config.
func (b *builder) controlPlaneKubeadm() {
	spec := map[string]any{}
	extraArgs := map[string]any{}
	var files, extraVolumes []any

	if b.labels.boolean("audit_log_enabled") {
		maxAge, _ := b.labels.integer("audit_log_max_age")
		maxBackup, _ := b.labels.integer("audit_log_max_backup")
		maxSize, _ := b.labels.integer("audit_log_max_size")
		files = append(files, map[string]any{
			"path": auditPolicyFile, "owner": "root:root", "permissions": "0600", "content": auditPolicy,
		})
		extraArgs["audit-policy-file"] = auditPolicyFile
		extraArgs["audit-log-path"] = auditLogFile
		extraArgs["audit-log-maxage"] = fmt.Sprint(maxAge)
		extraArgs["audit-log-maxbackup"] = fmt.Sprint(maxBackup)
		extraArgs["audit-log-maxsize"] = fmt.Sprint(maxSize)
		extraVolumes = append(extraVolumes,
			map[string]any{"name": "audit-policy", "hostPath": auditPolicyDir, "mountPath": auditPolicyDir, "readOnly": true, "pathType": "DirectoryOrCreate"},
			map[string]any{"name": "audit-logs", "hostPath": auditLogDir, "mountPath": auditLogDir, "readOnly": false, "pathType": "DirectoryOrCreate"},
		)
	}
	if plugins := b.labels.list("admission_control_list"); len(plugins) > 0 {
		extraArgs["enable-admission-plugins"] = strings.Join(plugins, ",")
	}
	apiServer := map[string]any{}
	if len(extraArgs) > 0 {
		apiServer["extraArgs"] = extraArgs
	}
	if len(extraVolumes) > 0 {
		apiServer["extraVolumes"] = extraVolumes
	}
	if sans := b.labels.list("api_server_cert_sans"); len(sans) > 0 {
		apiServer["certSANs"] = stringsToAny(sans)
	}
	if len(apiServer) > 0 {
		spec["clusterConfiguration"] = map[string]any{"apiServer": apiServer}
	}

	proxyFiles, proxyCommands := b.proxyConfig()
	files = append(files, proxyFiles...)
	if len(files) > 0 {
		spec["files"] = files
	}
	if len(proxyCommands) > 0 {
		spec["preKubeadmCommands"] = proxyCommands
	}
	for key, value := range spec {
		put(b.values, value, "controlPlane", "kubeadmConfigSpec", key)
	}
}

// workerKubeadm adds the container runtime proxy to every worker node group.
func (b *builder) workerKubeadm() {
	files, commands := b.proxyConfig()
	if len(files) > 0 {
		put(b.values, files, "nodeGroupDefaults", "kubeadmConfigSpec", "files")
		put(b.values, commands, "nodeGroupDefaults", "kubeadmConfigSpec", "preKubeadmCommands")
	}
}

const containerdProxyDropIn = "/etc/systemd/system/containerd.service.d/http-proxy.conf"

// proxyConfig turns the template's http_proxy, https_proxy and no_proxy into
// a systemd drop-in for containerd, so images are pulled through the proxy.
// The cluster's own networks and names are always added to NO_PROXY.
func (b *builder) proxyConfig() (files, commands []any) {
	t := b.in.ClusterTemplate
	if b.proxyChecked == nil {
		b.proxyChecked = &proxySettings{}
		b.proxyChecked.httpProxy = b.proxyURL(t.HTTPProxy, "cluster_template.http_proxy")
		b.proxyChecked.httpsProxy = b.proxyURL(t.HTTPSProxy, "cluster_template.https_proxy")
		b.proxyChecked.noProxy = b.noProxy(t.NoProxy)
	}
	ps := b.proxyChecked
	if ps.httpProxy == "" && ps.httpsProxy == "" {
		return nil, nil
	}
	var unit strings.Builder
	unit.WriteString("[Service]\n")
	for _, env := range []struct{ name, value string }{
		{"HTTP_PROXY", ps.httpProxy}, {"http_proxy", ps.httpProxy},
		{"HTTPS_PROXY", ps.httpsProxy}, {"https_proxy", ps.httpsProxy},
		{"NO_PROXY", ps.noProxy}, {"no_proxy", ps.noProxy},
	} {
		if env.value != "" {
			// Validated values hold no quotes, backslashes or whitespace; '%'
			// is systemd's specifier character and is doubled.
			fmt.Fprintf(&unit, "Environment=\"%s=%s\"\n", env.name, strings.ReplaceAll(env.value, "%", "%%"))
		}
	}
	files = []any{map[string]any{
		"path": containerdProxyDropIn, "owner": "root:root", "permissions": "0600", "content": unit.String(),
	}}
	commands = []any{"systemctl daemon-reload", "systemctl restart containerd"}
	return files, commands
}

type proxySettings struct {
	httpProxy, httpsProxy, noProxy string
}

func (b *builder) proxyURL(raw, field string) string {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return ""
	}
	if msg := checkURL(raw, []string{"http", "https", "socks5"}); msg != "" || strings.Contains(raw, "%%") {
		b.p.field(field, redactURL(raw), "an http, https or socks5 proxy URL without spaces, quotes, braces or backslashes")
		return ""
	}
	return raw
}

// redactURL hides a proxy password from error messages, also in URLs that
// do not parse.
func redactURL(raw string) string {
	scheme := strings.Index(raw, "://")
	at := strings.LastIndex(raw, "@")
	if scheme < 0 || at < scheme {
		return raw
	}
	userinfo := raw[scheme+3 : at]
	if user, _, hasPassword := strings.Cut(userinfo, ":"); hasPassword {
		return raw[:scheme+3] + user + ":xxxxx" + raw[at:]
	}
	return raw
}

var noProxyRegexp = regexp.MustCompile(`^[A-Za-z0-9.*:/_\[\]-]+$`)

func (b *builder) noProxy(raw string) string {
	entries := []string{"localhost", "127.0.0.1", "::1", ".svc", "." + b.svcDomain, b.podCIDR, b.svcCIDR}
	if b.nodeCIDR != "" {
		entries = append(entries, b.nodeCIDR)
	}
	for _, item := range strings.Split(raw, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		if len(item) > 253 || !noProxyRegexp.MatchString(item) {
			b.p.field("cluster_template.no_proxy", raw, "comma-separated host names, domains, IP addresses or CIDRs")
			return ""
		}
		entries = append(entries, item)
	}
	seen := map[string]bool{}
	out := entries[:0]
	for _, e := range entries {
		if !seen[e] {
			seen[e] = true
			out = append(out, e)
		}
	}
	return strings.Join(out, ",")
}
