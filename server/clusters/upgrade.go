package clusters

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/magnum-capi/magnum-capi/helmvalues"
)

// Upgrade moves the cluster to the template in spec (new image, so new
// Kubernetes version, and possibly a new chart version). Cluster API rolls
// the control plane and node groups. A downgrade, or a skip of more than one
// minor version (which kubeadm does not support), or a template that changes
// the API server's endpoint (endpoint_fixed.go), is refused before anything
// changes. It returns the Kubernetes version being rolled out. It must
// answer well within Magnum's 60 s RPC timeout: it only renders and applies.
// Once Helm writes the release (commit_gate.go) the upgrade is under way:
// a deadline then is success (Helm finishes in the background), and a
// failure after the release record was written an AppliedError, so Magnum
// records the new template either way (the next update finishes it).
//
// With opts.NodeGroupUUID naming a worker group that is not the default one,
// only that group moves: spec holds the cluster's own template and the
// group's new image_id (Magnum's API allows such an upgrade only to the
// cluster's template), the values give the group its own version and image,
// and checkGroupUpgrade refuses a control plane change, a group newer than
// the control plane and a downgrade. The version returned is the group's.
//
// Idempotent: retried, it renders the same values and finds the control
// plane (or the group) already at or moving to the version, which the
// checks allow.
func (s *Service) Upgrade(ctx context.Context, caller Caller, spec Spec, opts UpgradeOptions) (string, error) {
	var wanted string
	op, err := s.prepare(ctx, caller, spec, func(op *operation) error {
		if err := helmvalues.WithUpgradeBatch(op.values.values, opts.MaxBatchSize); err != nil {
			return err
		}
		cpWanted, _ := op.values.values["kubernetesVersion"].(string)
		wanted = cpWanted
		objs, err := op.mc.Cache.Objects(ctx, op.ns, op.stackID())
		if err != nil {
			return err
		}
		current := spec.Cluster.COEVersion
		if objs.ControlPlane != nil && objs.ControlPlane.Spec.Version != "" {
			current = objs.ControlPlane.Spec.Version
		}
		ng, single := singleGroup(spec, opts.NodeGroupUUID)
		if !single {
			return checkUpgrade(current, cpWanted)
		}
		chartName := helmvalues.NodeGroupName(op.stackID(), ng.Name)
		wanted = groupVersion(op.values.values, chartName)
		return checkGroupUpgrade(ng, current, cpWanted, observedGroupVersion(objs.MachineDeployments, chartName), wanted)
	})
	if err != nil {
		return "", err
	}
	err = s.withLock(ctx, op, func(ctx context.Context) error {
		if err := s.checkEndpointFixed(ctx, op); err != nil {
			return err
		}
		s.renewCredentialIfDue(ctx, caller, op)
		if err := s.placeServerGroups(ctx, op, false); err != nil {
			return err
		}
		out, err := s.deployGated(ctx, op, true, nil)
		if err != nil && out.wrote {
			return &AppliedError{Change: "the upgrade", Err: err}
		}
		return err
	})
	if err != nil {
		return "", err
	}
	return "v" + strings.TrimPrefix(wanted, "v"), nil
}

// checkUpgrade refuses Kubernetes version changes kubeadm cannot do in
// place. An unknown current version (never observed) lets the upgrade pass.
func checkUpgrade(current, target string) error {
	if current == "" || target == "" {
		return nil
	}
	cur, err1 := parseKubeVersion(current)
	tgt, err2 := parseKubeVersion(target)
	if err1 != nil || err2 != nil {
		return nil
	}
	// Both versions as Kubernetes writes them (the cluster's has a "v", an
	// image's kube_version may not).
	switch {
	case compare(tgt, cur) < 0:
		return preconditionf("downgrading Kubernetes from %s to %s is not supported", kubeVersion(cur), kubeVersion(tgt))
	case tgt[0] != cur[0] || tgt[1] > cur[1]+1:
		return preconditionf("upgrading Kubernetes from %s to %s skips a minor version; upgrade to v%d.%d first",
			kubeVersion(cur), kubeVersion(tgt), cur[0], cur[1]+1)
	}
	return nil
}

func kubeVersion(v [3]int) string { return fmt.Sprintf("v%d.%d.%d", v[0], v[1], v[2]) }

func parseKubeVersion(v string) ([3]int, error) {
	var out [3]int
	v = strings.TrimPrefix(strings.TrimSpace(v), "v")
	if i := strings.IndexAny(v, "-+"); i >= 0 {
		v = v[:i]
	}
	parts := strings.Split(v, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return out, fmt.Errorf("not a Kubernetes version: %q", v)
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil {
			return out, fmt.Errorf("not a Kubernetes version: %q", v)
		}
		out[i] = n
	}
	return out, nil
}

func compare(a, b [3]int) int {
	for i := range a {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}
