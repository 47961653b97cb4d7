package testchart

import (
	"os"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
)

// realChartEnv names a directory holding the real openstack-cluster chart
// with its dependencies built (e.g. a capi-helm-charts checkout at 0.27.0
// after `helm dependency build charts/openstack-cluster`). The real chart is
// not part of this repository, so the test below runs only when it is given.
const realChartEnv = "MAGNUM_CAPI_REAL_OPENSTACK_CLUSTER_CHART"

// TestMatchesRealChartSource renders the real chart and the test chart for
// values the snapshots do not cover and compares every object, checksums
// included. Known differences: the dashboards (see dashboardSources); and
// machineMetadata of node groups, which the real chart leaks into other node
// groups and the control plane (it merges into .Values.machineMetadata in
// place while rendering), so no case sets it per node group.
func TestMatchesRealChartSource(t *testing.T) {
	dir := os.Getenv(realChartEnv)
	if dir == "" {
		t.Skipf("set %s to a directory with the real openstack-cluster chart to compare with it", realChartEnv)
	}
	for _, tc := range []struct{ name, values string }{
		{"flatcar", "osDistro: flatcar"},
		{"keystone webhook", "authWebhook: k8s-keystone-auth"},
		{"azimuth webhook", "authWebhook: azimuth-authorization-webhook\nazimuthAuthorizationWebhook: {server: https://authz.example.com/authorize, extraPreFilters: [a == b], tls: {cert: \"-----BEGIN CERTIFICATE-----\\nabc\\n-----END CERTIFICATE-----\\n\"}}"},
		{"unknown webhook", "authWebhook: something"},
		{"trusted CAs and packages", "trustedCAs: {corp: \"-----BEGIN CERTIFICATE-----\\nabc\\n-----END CERTIFICATE-----\\n\"}\nadditionalPackages: [nfs-common, jq]"},
		{"flatcar with everything", "osDistro: flatcar\nauthWebhook: k8s-keystone-auth\ntrustedCAs: {a: b}\nadditionalPackages: [x]\ncontrolPlane: {nodeLabels: {q: r}}"},
		{"registry mirrors and auth", "registryMirrors: {docker.io: {upstream: https://up.example.com, mirrors: [https://m1.example.com, {url: https://m2.example.com, capabilities: [pull], skipVerify: true, overridePath: false}]}, quay.io: null}\nregistryAuth: {docker.io: {username: u, password: p}}"},
		{"cilium", "addons: {cni: {type: cilium}}"},
		{"cilium without kube-proxy replacement", "addons: {cni: {type: cilium, cilium: {release: {values: {kubeProxyReplacement: false}}}}}"},
		{"control plane placement", "controlPlane: {nodeLabels: {a: b, c: d}, failureDomains: [az1, az2], omitFailureDomain: false, serverGroupId: sg1, machineMetadata: {x: y}, machineConfigDrive: true, additionalBlockDevices: {scratch: {size: 5, type: Local}}}\nnodeGroupDefaults: {nodeLabels: {e: f}, failureDomain: az1, serverGroupId: sg2}\nmachineMetadata: {g: h}"},
		{"existing network and ports", "clusterNetworking: {internalNetwork: {networkFilter: {name: net, tags: 'a,b'}, subnetFilter: {id: sub1}}, disableExternalNetwork: true}\ncontrolPlaneEndpoint: {host: 1.2.3.4, port: 6443}\napiServer: {floatingIP: 5.6.7.8, fixedIP: 10.0.0.5, port: 443, allowedCIDRs: [1.0.0.0/8]}\nnodeGroupDefaults: {machineNetworking: {ports: [{}, {network: {name: n2, tags: x}, securityGroups: []}, {network: {filter: {name: n3}}}]}}"},
		{"no load balancer or security groups", "apiServer: {enableLoadBalancer: false, associateFloatingIP: true}\nclusterNetworking: {manageSecurityGroups: false, dnsNameservers: [9.9.9.9]}"},
		{"worker security group rules", "clusterNetworking: {allowAllInClusterTraffic: false, workerNodesSecurityGroupRules: [{name: r1, direction: ingress, etherType: IPv4, protocol: tcp, portRangeMin: 22, portRangeMax: 22}]}"},
		{"OIDC", "oidc: {issuerUrl: https://idp.example.com, clientId: k8s}"},
		{"local etcd disk", "etcd: {blockDevice: {size: 10, type: Local}, dataDir: /var/lib/etcd/data}"},
		{"root and extra volumes", "controlPlane: {machineRootVolume: {diskSize: 30, volumeType: ssd, availabilityZone: az9}}\nnodeGroupDefaults: {machineRootVolume: {diskSize: 50}, additionalBlockDevices: {data: {size: 100, volumeType: hdd, availabilityZone: az3}}}"},
		{"admission configuration", "apiServer: {admissionConfiguration: {PodSecurity: {apiVersion: pod-security.admission.config.k8s.io/v1, kind: PodSecurityConfiguration, defaults: {enforce: baseline}}}}"},
		{"node group overrides", "nodeGroups: [{name: workers, machineFlavor: m1.large, autoscale: true, machineCountMin: 0, machineCountMax: 3, kubernetesVersion: v1.32.1, machineImage: 'img-{{ .Values.kubernetesVersion }}', nodeLabels: {capi.stackhpc.com/node-group: other, k: v}}]"},
		{"several node groups", "nodeGroups: [{name: aaa, machineFlavor: f1, machineCount: 1, nodeLabels: {x: y}}, {name: bbb, machineFlavor: f2, machineCount: 2, machineImageId: img2, kubernetesVersion: 1.32.0, healthCheck: {enabled: false}}, {name: ccc, machineFlavor: f3, autoscale: true, machineCountMin: 2, machineCountMax: 2}]"},
		{"control plane overrides", "controlPlane: {kubernetesVersion: v1.31.0, machineImage: 'cp-{{ .Values.kubernetesVersion }}', machineCount: 1, healthCheck: {enabled: false}}"},
		{"user kubeadm config", "controlPlane: {kubeadmConfigSpec: {files: [{path: /x, content: y}], preKubeadmCommands: [echo hi], kubeProxyConfiguration: {mode: ipvs}}}\nnodeGroupDefaults: {kubeadmConfigSpec: {files: [{path: /z, content: w}], joinConfiguration: {nodeRegistration: {taints: [{key: a, effect: NoSchedule}]}}}}"},
		{"cluster settings and autoscaler", "clusterAnnotations: {a: b}\nprojectPrefix: example.org\nkubeNetwork: {pods: {cidrBlocks: [10.1.0.0/16]}, services: {cidrBlocks: [10.2.0.0/16]}, serviceDomain: x.local}\nautoscaler: {image: {tag: v9}, imagePullSecrets: [{name: s}], nodeSelector: {a: b}, tolerations: [{key: k, operator: Exists}], extraArgs: {v: 2, foo: bar}}"},
		{"chart-made credentials", "cloudCredentialsSecretName: null\nclouds: {mycloud: {auth: {auth_url: https://k}, region_name: R}}\ncloudName: mycloud\ncloudCACert: \"-----BEGIN CERTIFICATE-----\\nabc\\n-----END CERTIFICATE-----\\n\""},
		{"no addons", "addons: {enabled: false}"},
		{"addons off one by one", "addons: {cni: {enabled: false}, openstack: {enabled: false}, metricsServer: {enabled: false}, nodeFeatureDiscovery: {enabled: false}, nvidiaGPUOperator: {enabled: false}, mellanoxNetworkOperator: {enabled: false}, nodeProblemDetector: {enabled: false}, etcdDefrag: {enabled: false}}"},
		{"addon settings", "addons: {clusterName: other, etcdDefrag: {chart: {version: 1.2.3}}, openstack: {ccm: {values: {a: b}}, csiCinder: {defaultStorageClass: {enabled: false}, additionalStorageClasses: [{name: x, fstype: ext4, allowVolumeExpansion: false}]}}}"},
		{"cloud.conf sections", "addons: {openstack: {cloudConfig: {Networking: {internal-network-name: foo, ipv6-support-disabled: true}, LoadBalancer: {floating-network-id: abc, lb-provider: ovn}, Metadata: {search-order: configDrive}, Global: {x: y}}, csiCinder: {additionalStorageClasses: [{name: extra}]}}}"},
		{"calico policy", "addons: {cni: {calico: {globalNetworkPolicy: {denyEgressCidrs: [1.1.1.1/32, 2.2.2.2/32], allowv6EgressCidrs: []}}}}"},
		{"monitoring without volume sizes", "addons: {monitoring: {enabled: true, kubePrometheusStack: {release: {values: {prometheus: {prometheusSpec: {storageSpec: null}}}}}, lokiStack: {release: {values: {loki: {persistence: {enabled: false}}}}}}}"},
		{"Manila CephFS", "addons: {openstack: {csiManila: {enabled: true, defaultStorageClass: {isClusterDefault: true, parameters: {type: cephfsnative1, shareNetworkID: sn1}}}}, csi: {cephfs: {enabled: true}}}"},
		{"Manila NFS", "addons: {openstack: {csiManila: {enabled: true, values: {shareProtocols: [{protocolSelector: NFS, fsGroupPolicy: None, fwdNodePluginEndpoint: {dir: /var/lib/kubelet/plugins/csi-nfsplugin, sockFile: csi.sock}}]}, defaultStorageClass: {provisioner: nfs.manila.csi.openstack.org, parameters: {type: default, shareNetworkID: sn1}}, additionalStorageClasses: [{name: extra, provisioner: nfs.manila.csi.openstack.org, reclaimPolicy: Retain, allowVolumeExpansion: false, volumeBindingMode: Immediate, allowedTopologies: [{matchLabelExpressions: [{key: k, values: [a]}]}], parameters: {type: t2}}]}}, custom: {csi-nfs: {kind: HelmRelease, spec: {namespace: csi-nfs-system, chart: {repo: https://r, name: csi-driver-nfs, version: 4.13.4}, values: {controller: {runOnControlPlane: true}}}}}}"},
		{"Manila without storage classes", "addons: {openstack: {csiManila: {enabled: true, defaultStorageClass: {enabled: false}}}}"},
		{"AMD GPU operator", "addons: {amdGPUOperator: {enabled: true, release: {values: {a: b}}}, nvidiaGPUOperator: {enabled: false}}"},
		{"AMD GPU operator with monitoring", "addons: {amdGPUOperator: {enabled: true}, monitoring: {enabled: true}}"},
		{"optional addons", "addons: {custom: {hr: {kind: HelmRelease, spec: {namespace: n, chart: {repo: https://r, name: c, version: 1.0.0}, values: {a: '{{ x }}'}}}, mf: {kind: Manifests, spec: {namespace: n, manifests: {a.yaml: \"kind: ConfigMap\\n\", b.yaml: 'kind: Secret'}}}}, reloader: {enabled: true}, certManager: {enabled: true}, csi: {cephfs: {enabled: true}}}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			real, err := loader.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			want, err := Render(real, "demo", "ns", mergeValues(parseValues(t, minimalValues), parseValues(t, tc.values)))
			if err != nil {
				t.Fatalf("the real chart: %v", err)
			}
			ours, err := Load()
			if err != nil {
				t.Fatal(err)
			}
			// The labels name the chart version; compare at the real one's.
			ours.Metadata.Version = real.Metadata.Version
			for _, dep := range ours.Dependencies() {
				dep.Metadata.Version = real.Metadata.Version
			}
			got, err := Render(ours, "demo", "ns", mergeValues(parseValues(t, minimalValues), parseValues(t, tc.values)))
			if err != nil {
				t.Fatalf("the test chart: %v", err)
			}
			compareObjects(t, "demo", want, got)
		})
	}
}
