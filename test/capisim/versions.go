package capisim

import (
	"sort"

	"github.com/blang/semver/v4"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// machineVersion is the Kubernetes version a Machine runs: its kubelet's
// once the node reports one, else its spec (as CAPI's VersionsFromMachines).
func machineVersion(m *clusterv1.Machine) string {
	if m.Status.NodeInfo != nil && m.Status.NodeInfo.KubeletVersion != "" {
		return m.Status.NodeInfo.KubeletVersion
	}
	return m.Spec.Version
}

// versionsFromMachines counts Machines per version, lowest version first.
func versionsFromMachines(machines []*clusterv1.Machine) []clusterv1.StatusVersion {
	var vs []clusterv1.StatusVersion
	for _, m := range machines {
		if v := machineVersion(m); v != "" {
			vs = append(vs, clusterv1.StatusVersion{Version: v, Replicas: 1})
		}
	}
	return aggregateVersions(vs)
}

// aggregateVersions sums replicas per version, lowest version first; nil
// when there is none.
func aggregateVersions(in []clusterv1.StatusVersion) []clusterv1.StatusVersion {
	if len(in) == 0 {
		return nil
	}
	index := map[string]int{}
	var out []clusterv1.StatusVersion
	for _, v := range in {
		if i, ok := index[v.Version]; ok {
			out[i].Replicas += v.Replicas
			continue
		}
		index[v.Version] = len(out)
		out = append(out, v)
	}
	sort.SliceStable(out, func(i, j int) bool { return versionLess(out[i].Version, out[j].Version) })
	return out
}

func versionLess(a, b string) bool {
	va, erra := semver.ParseTolerant(a)
	vb, errb := semver.ParseTolerant(b)
	if erra != nil || errb != nil {
		return a < b
	}
	return va.LT(vb)
}

// minorOf returns the major and minor numbers of a Kubernetes version.
func minorOf(v string) (uint64, uint64, bool) {
	sv, err := semver.ParseTolerant(v)
	if err != nil {
		return 0, 0, false
	}
	return sv.Major, sv.Minor, true
}
