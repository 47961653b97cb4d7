package capistatus

import (
	"strings"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/labels/format"
)

// isControlPlaneMachine: CAPI labels control plane machines itself; the
// chart's component label is the fallback for objects written without it.
func isControlPlaneMachine(m *clusterv1.Machine) bool {
	if _, ok := m.Labels[labelCAPIControlPlane]; ok {
		return true
	}
	return m.Labels[labelChartComponent] == "control-plane"
}

func controlPlaneMachines(snap Snapshot) []clusterv1.Machine {
	var out []clusterv1.Machine
	for i := range snap.Machines {
		if isControlPlaneMachine(&snap.Machines[i]) {
			out = append(out, snap.Machines[i])
		}
	}
	return out
}

// workerMachines are a node group's machines: labelled with the chart's node
// group name, or owned (by CAPI's label) by its MachineDeployment. The second
// catches machines whose MachineDeployment was renamed by the chart's 63
// character cut. CAPI writes a name longer than a label value allows as its
// hash, so the label is compared with the name as CAPI formats it.
func workerMachines(snap Snapshot, chartName, mdName string) []clusterv1.Machine {
	var out []clusterv1.Machine
	for i := range snap.Machines {
		m := &snap.Machines[i]
		if isControlPlaneMachine(m) {
			continue
		}
		if (chartName != "" && m.Labels[labelChartNodeGroup] == chartName) || (mdName != "" && m.Labels[labelCAPIDeployment] == format.MustFormatValue(mdName)) {
			out = append(out, *m)
		}
	}
	return out
}

// nodeAddresses returns one address per machine that is not being deleted, in
// machine name order: its InternalIP, else its ExternalIP. Magnum shows one
// address per node; the internal one is what every node has (a floating IP is
// optional).
func nodeAddresses(machines []clusterv1.Machine) []string {
	out := []string{}
	for i := range machines {
		m := &machines[i]
		if m.DeletionTimestamp != nil {
			continue
		}
		if a := addressOfType(m, clusterv1.MachineInternalIP); a != "" {
			out = append(out, a)
		} else if a := addressOfType(m, clusterv1.MachineExternalIP); a != "" {
			out = append(out, a)
		}
	}
	return out
}

func addressOfType(m *clusterv1.Machine, t clusterv1.MachineAddressType) string {
	for _, a := range m.Status.Addresses {
		if a.Type == t && a.Address != "" {
			return a.Address
		}
	}
	return ""
}

// machineCounts summarises a group's machines for rollout checks.
type machineCounts struct {
	live, deleting, outdated int
	// unobserved machines have a spec change their controller has not
	// reconciled yet, so their conditions describe the previous spec.
	unobserved int
	// notReady is the first live machine that is not Ready, and notReadyWhy
	// why: its condition, whose message usually names the step it is stuck
	// at, or its server's state while it waits for one.
	notReady    *clusterv1.Machine
	notReadyWhy string
}

func countMachines(machines []clusterv1.Machine, servers []OpenStackServer) machineCounts {
	var c machineCounts
	for i := range machines {
		m := &machines[i]
		if m.DeletionTimestamp != nil {
			c.deleting++
			continue
		}
		c.live++
		if m.Status.ObservedGeneration < m.Generation {
			c.unobserved++
		}
		if findV2(m.Status.Conditions, clusterv1.MachineUpToDateCondition).isFalse() {
			c.outdated++
		}
		if c.notReady == nil && !machineReady(m) {
			c.notReady, c.notReadyWhy = m, notReadyWhy(m, servers)
		}
	}
	return c
}

// notReadyWhy says why a machine is not ready. While CAPO waits for the
// machine's OpenStackServer (CAPO v0.14 learns of a server only once it is
// ACTIVE), the machine's conditions are CAPO's earlier ones, e.g.
// WaitingForBootstrapData, long after the data came: the server's state
// says more. What Nova said about a server it refused or built into ERROR
// is a problem item of its own (machineProblems) and is not repeated here.
func notReadyWhy(m *clusterv1.Machine, servers []OpenStackServer) string {
	if s := serverOf(m, servers); s != nil && !s.Status.Ready {
		if s.novaError() != "" {
			return serverTitle(m, s) + " did not come up"
		}
		switch state := deref(s.Status.InstanceState); state {
		case "":
			return serverTitle(m, s) + " is being created"
		case "BUILD":
			return serverTitle(m, s) + " is building"
		default:
			return serverTitle(m, s) + " is " + state
		}
	}
	why := firstOf(m.Status.Conditions, machineV1(m), clusterv1.MachineReadyCondition, clusterv1.ReadyV1Beta1Condition).text()
	if why == "" {
		return "not ready"
	}
	return why
}

// serverTitle names a machine's server after the machine's name: "its
// OpenStack server" when CAPO named it after the machine (it does), so that
// a reason does not repeat a long name.
func serverTitle(m *clusterv1.Machine, s *OpenStackServer) string {
	if s.Name == m.Name {
		return "its OpenStack server"
	}
	return "OpenStack server " + s.Name
}

// machineReady reads the v1beta2 Ready condition, falling back to v1beta1 Ready.
func machineReady(m *clusterv1.Machine) bool {
	return firstOf(m.Status.Conditions, machineV1(m), clusterv1.MachineReadyCondition, clusterv1.ReadyV1Beta1Condition).isTrue()
}

// machineProblems are the errors on machines a user can act on: CAPI's
// (deprecated, still mirrored from CAPO) failureReason/failureMessage, e.g.
// "The server was unexpectedly deleted", v1beta1 conditions with severity
// Error, and what Nova answered for a server that never came up (quota
// exhausted, ERROR), which CAPO v0.14 keeps on the OpenStackServer alone.
// They do not fail the cluster by themselves: a MachineHealthCheck or the
// control plane's remediation replaces failed machines, and freed quota
// lets CAPO's retries succeed, so the timeout decides.
func machineProblems(machines []clusterv1.Machine, servers []OpenStackServer) []string {
	var out []string
	for i := range machines {
		m := &machines[i]
		if m.DeletionTimestamp != nil {
			continue
		}
		if d := m.Status.Deprecated; d != nil && d.V1Beta1 != nil {
			if f := joinFailure((*string)(d.V1Beta1.FailureReason), d.V1Beta1.FailureMessage); f != "" {
				out = append(out, "machine "+m.Name+" failed: "+f)
				continue
			}
		}
		if errs := errorConditions(machineV1(m)); len(errs) > 0 {
			out = append(out, "machine "+m.Name+": "+errs[0].fullText())
			continue
		}
		if s := serverOf(m, servers); s != nil && !machineReady(m) {
			if e := s.novaError(); e != "" {
				out = append(out, "machine "+m.Name+": "+serverTitle(m, s)+e)
			}
		}
	}
	return out
}

// machineNames lists up to three names, then how many more.
func machineNames(machines []clusterv1.Machine) string {
	names := make([]string, 0, len(machines))
	for i := range machines {
		names = append(names, machines[i].Name)
	}
	return listNames(names, 3)
}

func listNames(names []string, limit int) string {
	if len(names) <= limit {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:limit], ", ") + ", +" + itoa(len(names)-limit) + " more"
}
