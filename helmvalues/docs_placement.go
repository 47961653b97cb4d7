package helmvalues

// systemPodsMarkdown is docs/labels.md's section on where the cluster's
// system pods run when a worker group can be empty (placement.go).
func systemPodsMarkdown(p func(format string, args ...any)) {
	p("### System pods when a worker group can be empty\n\n")
	p("A worker group at zero nodes stays at zero only if nothing the cluster itself needs waits for a worker, and it shrinks back to zero only if nothing of the cluster's own stays on its nodes (the autoscaler keeps a node that runs `kube-system` pods). ")
	p("So when some worker group can be empty (its node count is 0, or it is autoscaled from a minimum of 0), the Deployments and StatefulSets of the addons the chart installs tolerate the control plane's taint (`%s:NoSchedule`) and prefer control plane nodes; ", controlPlaneRole)
	p("they are told so in their own charts' values, which the addon provider installs them with:\n\n")
	p("| addon | its values that carry the toleration and the preference | when |\n|---|---|---|\n")
	p("| metrics-server | `addons.metricsServer.release.values` | always (the chart installs it) |\n")
	p("| ingress-nginx | `addons.ingress.nginx.release.values.controller` | `ingress_controller=nginx` |\n")
	p("| Traefik | `addons.ingress.traefik.release.values` | `ingress_controller=traefik` |\n")
	p("| kube-prometheus-stack | `prometheusOperator`, `prometheus.prometheusSpec`, `alertmanager.alertmanagerSpec`, `grafana`, `kube-state-metrics` under `addons.monitoring.kubePrometheusStack.release.values` | `monitoring_enabled` |\n")
	p("| loki-stack, blackbox exporter | `addons.monitoring.lokiStack.release.values.loki`, `addons.monitoring.blackboxExporter.release.values` | `monitoring_enabled` |\n")
	p("| Manila CSI controller, CephFS provisioner | `addons.openstack.csiManila.values.controllerplugin`, `addons.csi.cephfs.release.values.provisioner` | `manila_csi_enabled` |\n\n")
	p("A preference, not a requirement: when the control plane has no room they run on workers, as they do in a cluster whose every worker group keeps a node (which is left as the chart places it). ")
	p("The rest already runs without a worker: the cluster autoscaler runs in the management cluster; the chart places the Calico operator and the Cinder CSI controller on the control plane; the OpenStack cloud controller manager and k8s-keystone-auth are control plane DaemonSets; the Cilium operator tolerates every taint; csi-driver-nfs's controller (NFS shares), unused since Manila CSI's controller provisions the shares, always runs on the control plane (`controller.runOnControlPlane` in `addons.custom.%s.spec.values`); kubeadm's CoreDNS tolerates the control plane; node-level addons (CNI agents, CSI node plugins, node-problem-detector) are DaemonSets on every node. ", csiNFSAddon)
	p("CoreDNS is kubeadm's and is not moved: once a worker exists the scheduler may put a CoreDNS pod there, and the autoscaler then keeps that node until the pod is evicted by other means.\n\n")
}
