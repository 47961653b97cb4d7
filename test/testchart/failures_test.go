package testchart

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// minimalValues is the least the chart renders: credentials, a version, an
// image, a control plane flavor and one node group.
const minimalValues = `
cloudCredentialsSecretName: demo-cloud-credentials
kubernetesVersion: 1.33.4
machineImageId: image-id
controlPlane:
  machineFlavor: m1.medium
nodeGroups:
  - name: workers
    machineFlavor: m1.large
    machineCount: 2
`

func parseValues(t *testing.T, doc string) map[string]any {
	t.Helper()
	var values map[string]any
	if err := yaml.Unmarshal([]byte(doc), &values); err != nil {
		t.Fatalf("parsing values: %v\n%s", err, doc)
	}
	return values
}

// TestRenderFailsLikeRealChart checks the chart refuses the values the real
// chart refuses, with the real chart's message. A null value removes the
// key, as with Helm.
func TestRenderFailsLikeRealChart(t *testing.T) {
	if _, err := renderFresh(t, "demo", parseValues(t, minimalValues)); err != nil {
		t.Fatalf("the minimal values must render: %v", err)
	}
	for _, tc := range []struct {
		name      string
		overrides string
		wantError string
	}{
		{"no credentials", "cloudCredentialsSecretName: null",
			"clouds must be specified if cloudCredentialsSecretName is not given"},
		{"no version for the control plane", "kubernetesVersion: null\nnodeGroupDefaults: {kubernetesVersion: 1.33.4}",
			"One of .Values.controlPlane.kubernetesVersion or .Values.kubernetesVersion is required"},
		{"no version for a node group", "kubernetesVersion: null\ncontrolPlane: {kubernetesVersion: 1.33.4}",
			"unable to determine Kubernetes version for node group 'workers'"},
		{"no control plane flavor", "controlPlane: {machineFlavor: null}",
			".Values.controlPlane.machineFlavor is required"},
		{"no node group flavor", "nodeGroups: [{name: workers, machineCount: 2}]",
			"no flavor specified for node group 'workers'"},
		{"no control plane image", "machineImageId: null\nnodeGroupDefaults: {machineImageId: image-id}",
			"One of controlPlane.machineImageId, controlPlane.machineImage, machineImageId or machineImage is required"},
		{"no node group image", "machineImageId: null\ncontrolPlane: {machineImageId: image-id}",
			"One of nodeGroupDefaults.machineImageId, nodeGroupDefaults.machineImage, machineImageId or machineImage is required"},
		{"node group name too short", "nodeGroups: [{name: ab, machineFlavor: m1.large, machineCount: 1}]",
			"Node group name must be at least three characters long and must contain only lower-case alphanumeric characters and dashes (found name: ab)"},
		{"node group name with capitals", "nodeGroups: [{name: Workers, machineFlavor: m1.large, machineCount: 1}]",
			"(found name: Workers)"},
		{"no machine count", "nodeGroups: [{name: workers, machineFlavor: m1.large}]",
			"no machine count specified for node group 'workers'"},
		{"autoscaled without minimum", "nodeGroups: [{name: workers, machineFlavor: m1.large, autoscale: true, machineCountMax: 3}]",
			"no minimum machine count specified for node group 'workers'"},
		{"autoscaled without maximum", "nodeGroups: [{name: workers, machineFlavor: m1.large, autoscale: true, machineCountMin: 1}]",
			"no maximum machine count specified for node group 'workers'"},
		{"autoscaled with maximum below minimum", "nodeGroups: [{name: workers, machineFlavor: m1.large, autoscale: true, machineCountMin: 3, machineCountMax: 2}]",
			"maximum machine count < minimum machine count for node group 'workers'"},
		{"autoscaled with negative minimum", "nodeGroups: [{name: workers, machineFlavor: m1.large, autoscale: true, machineCountMin: -1, machineCountMax: 2}]",
			"autoscaling node groups require a minimum machine count of 0"},
		{"etcd volume without size", "etcd: {blockDevice: {type: Volume}}",
			"size is required for a block device"},
		{"node group volume without size", "nodeGroupDefaults: {additionalBlockDevices: {scratch: {type: Local}}}",
			"size is required for a block device"},
		{"OIDC without client", "oidc: {issuerUrl: https://idp.example.com}",
			"clientId is required for OIDC"},
		{"two ingress controllers", "addons: {ingress: {enabled: true, nginx: {enabled: true}, traefik: {enabled: true}}}",
			"Cannot enable both ingress.nginx and ingress.traefik addons simultaneously"},
		{"etcd encryption without its key Secret", "etcd: {encryption: {enabled: true}}",
			"etcd.encryption.enabled needs the key in Secret"},
		{"Manila storage class without a provisioner", "addons: {openstack: {csiManila: {enabled: true, defaultStorageClass: {parameters: {type: nfs1}}}}}",
			"Unable to determine provisioner for storage class - csi-manila"},
		{"Manila storage class without a share type", "addons: {openstack: {csiManila: {enabled: true, defaultStorageClass: {provisioner: nfs.manila.csi.openstack.org}}}}",
			"Unable to determine share type for storage class - csi-manila"},
		{"unknown custom addon kind", "addons: {custom: {mine: {kind: Chart, spec: {}}}}",
			"Unrecognised addon kind - Chart"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			values := mergeValues(parseValues(t, minimalValues), parseValues(t, tc.overrides))
			_, err := renderFresh(t, "demo", values)
			if err == nil {
				t.Fatalf("rendered; want the error %q", tc.wantError)
			}
			if !strings.Contains(err.Error(), tc.wantError) {
				t.Errorf("error %q\nwant it to contain %q", err, tc.wantError)
			}
		})
	}
}

// TestRenderWithoutOptionalObjects covers objects that exist only on request.
func TestRenderWithoutOptionalObjects(t *testing.T) {
	for _, tc := range []struct {
		name      string
		overrides string
		kind      string
		object    string
		want      bool
	}{
		{"chart-made credentials from clouds", "cloudCredentialsSecretName: null\nclouds: {openstack: {auth: {auth_url: https://keystone.example.com}}}", "Secret", "demo-cloud-credentials", true},
		{"no chart-made credentials with a Secret name", "", "Secret", "demo-cloud-credentials", false},
		{"control plane health check off", "controlPlane: {healthCheck: {enabled: false}}", "MachineHealthCheck", "demo-control-plane", false},
		{"node group health check off", "nodeGroupDefaults: {healthCheck: {enabled: false}}", "MachineHealthCheck", "demo-workers", false},
		{"node group health check on", "", "MachineHealthCheck", "demo-workers", true},
		{"no addons at all", "addons: {enabled: false}", "HelmRelease", "demo-cni-calico", false},
		{"no CNI for an unknown type", "addons: {cni: {type: flannel}}", "HelmRelease", "demo-cni-calico", false},
		{"cilium", "addons: {cni: {type: cilium}}", "HelmRelease", "demo-cni-cilium", true},
		{"registry credentials", "registryAuth: {registry.example.com: {username: u, password: p}}", "Secret", "demo-containerd-auth", true},
		{"admission configuration always", "", "Secret", "demo-admission-configuration", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			values := mergeValues(parseValues(t, minimalValues), parseValues(t, tc.overrides))
			objs, err := renderFresh(t, "demo", values)
			if err != nil {
				t.Fatal(err)
			}
			if got := find(objs, tc.kind, tc.object) != nil; got != tc.want {
				t.Errorf("%s %s rendered = %v, want %v", tc.kind, tc.object, got, tc.want)
			}
		})
	}
}

// TestRenderRefusesGoIntegersLikeRealChart: the real chart compares machine
// counts with a float literal (`lt $machineCountMin 0.0`), and Go templates
// refuse to compare an int with a float64. A values file always gives
// float64, but the Helm SDK passes Go values as they are, so a driver that
// sent Go ints failed with the real chart and not with this one (found by
// running Magnum's real services against the real chart 0.27.0).
func TestRenderRefusesGoIntegersLikeRealChart(t *testing.T) {
	values := parseValues(t, minimalValues)
	values["nodeGroups"] = []any{map[string]any{
		"name": "workers", "machineFlavor": "m1.large", "autoscale": true, "machineCountMin": 1, "machineCountMax": 4,
	}}
	_, err := renderFresh(t, "demo", values)
	if err == nil || !strings.Contains(err.Error(), "incompatible types for comparison") {
		t.Fatalf("render with Go int machine counts: %v; want the real chart's \"incompatible types for comparison\"", err)
	}
	values["nodeGroups"].([]any)[0].(map[string]any)["machineCountMin"] = 1.0
	values["nodeGroups"].([]any)[0].(map[string]any)["machineCountMax"] = 4.0
	if _, err := renderFresh(t, "demo", values); err != nil {
		t.Fatalf("render with float64 machine counts (what a values file gives): %v", err)
	}
}
