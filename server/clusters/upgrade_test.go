package clusters

import (
	"context"
	"errors"
	"strings"
	"testing"

	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"

	"github.com/magnum-capi/magnum-capi/helmvalues"
	"github.com/magnum-capi/magnum-capi/server/watchcache"
)

// controlPlaneAt is a control plane Cluster API runs at version.
func controlPlaneAt(version string) *controlplanev1.KubeadmControlPlane {
	cp := &controlplanev1.KubeadmControlPlane{}
	cp.Spec.Version = version
	return cp
}

func TestUpgrade(t *testing.T) {
	deploy := "deploy " + testNamespace + "/" + testStackID + " " + helmvalues.ChartVersion
	namespace := "ensure namespace " + testNamespace
	tests := []struct {
		name string
		// to is the Kubernetes version of the new template's image.
		to          string
		opts        UpgradeOptions
		arrange     func(b *bed, spec *Spec)
		wantClass   string
		wantIn      string // part of the error, or the version returned
		wantWritten []string
	}{
		{name: "the next minor version: the release upgraded", to: "v1.31.2",
			wantClass: "OK", wantIn: "v1.31.2", wantWritten: []string{deploy, namespace}},
		{name: "a retry, the control plane already moving: the release upgraded again", to: "v1.31.2",
			arrange:   func(b *bed, _ *Spec) { b.cache.objs.ControlPlane = controlPlaneAt("v1.31.2") },
			wantClass: "OK", wantIn: "v1.31.2", wantWritten: []string{deploy, namespace}},
		{name: "a downgrade: refused, nothing written", to: "v1.29.8",
			wantClass: "FailedPrecondition", wantIn: "downgrading Kubernetes from v1.30.4 to v1.29.8"},
		{name: "a skipped minor version: refused, nothing written", to: "v1.32.0",
			wantClass: "FailedPrecondition", wantIn: "skips a minor version; upgrade to v1.31 first"},
		{name: "a negative max_batch_size: refused, nothing written", to: "v1.31.2", opts: UpgradeOptions{MaxBatchSize: -1},
			wantClass: "InvalidArgument", wantIn: "max_batch_size"},
		{name: "one node group to a template that moves the control plane: refused, nothing written", to: "v1.31.2",
			arrange: func(_ *bed, spec *Spec) {
				spec.NodeGroups = append(spec.NodeGroups, gpuGroup("UPDATE_IN_PROGRESS"))
			},
			opts:      UpgradeOptions{NodeGroupUUID: gpuGroup("").UUID},
			wantClass: "InvalidArgument", wantIn: "nodegroup_uuid"},
		{name: "one node group to the control plane's version: that group upgraded", to: "v1.31.2",
			arrange: func(b *bed, spec *Spec) {
				b.cache.objs.ControlPlane = controlPlaneAt("v1.31.2")
				spec.NodeGroups = append(spec.NodeGroups, gpuGroupAt(b, "v1.31.2"))
			},
			opts:      UpgradeOptions{NodeGroupUUID: gpuGroup("").UUID},
			wantClass: "OK", wantIn: "v1.31.2", wantWritten: []string{deploy, namespace}},
		{name: "one node group past the control plane: refused, nothing written", to: "v1.30.4",
			arrange:   func(b *bed, spec *Spec) { spec.NodeGroups = append(spec.NodeGroups, gpuGroupAt(b, "v1.31.2")) },
			opts:      UpgradeOptions{NodeGroupUUID: gpuGroup("").UUID},
			wantClass: "InvalidArgument", wantIn: "nodegroups[gpu].image_id"},
		{name: "the watch cache not synced: Unavailable, nothing written", to: "v1.31.2",
			arrange:   func(b *bed, _ *Spec) { b.cache.err = &watchcache.NotSyncedError{Cluster: "default"} },
			wantClass: "Unavailable"},
		{name: "the Lease held by another operation: Aborted, nothing deployed", to: "v1.31.2",
			arrange:   func(b *bed, _ *Spec) { b.leaseHeld() },
			wantClass: "Aborted", wantIn: "another operation on this cluster is in progress", wantWritten: []string{namespace}},
		{name: "Helm fails after writing the release: the upgrade is in place", to: "v1.31.2",
			arrange: func(b *bed, _ *Spec) {
				b.releases.fail = failures{"DeployAfterWrite": errors.New("creating MachineDeployment: admission webhook denied the request")}
			},
			wantClass: "", wantIn: "the upgrade is in the management cluster", wantWritten: []string{deploy, namespace}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, spec := newBed(t), createdSpec()
			b.deployed(t, testSpec())
			b.cache.objs.ControlPlane = controlPlaneAt("v1.30.4")
			spec.Template.ImageID = "ubuntu-2204-kube-" + tt.to
			b.openstack.facts.Image.KubeVersion = tt.to
			if tt.arrange != nil {
				tt.arrange(b, &spec)
			}
			version, err := b.s.Upgrade(context.Background(), projectCaller, spec, tt.opts)
			if err == nil && version != tt.wantIn {
				t.Errorf("upgrading to %s, not %s", version, tt.wantIn)
			}
			assertOutcome(t, err, tt.wantClass, tt.wantIn, b.writes(), tt.wantWritten)
		})
	}
}

// gpuGroupAt is gpuGroup, made earlier (its server group exists), with an
// image of its own at version, which b's OpenStack resolves.
func gpuGroupAt(b *bed, version string) helmvalues.NodeGroup {
	ng := gpuGroup("UPDATE_IN_PROGRESS")
	name := helmvalues.NodeGroupServerGroupName(testStackID, helmvalues.NodeGroupName(testStackID, ng.Name))
	b.openstack.serverGroups[name] = madeServerGroup(name)
	ng.ImageID = "ubuntu-2204-kube-" + version
	b.openstack.facts.NodeGroupImages = map[string]helmvalues.Image{
		ng.ImageID: {ID: "0a1b2c3d-0000-4000-8000-" + strings.ReplaceAll(version, ".", "0")[1:], OSDistro: "ubuntu", KubeVersion: version},
	}
	return ng
}
