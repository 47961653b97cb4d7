package capicontrollers

import (
	"fmt"
	"path"
	"strconv"
	"sync"
	"time"

	"sigs.k8s.io/yaml"
)

// Faults are chosen per Cluster from two sources, annotations winning: a
// ConfigMap read while running (so that tests, which run in other
// processes, can set rules for Clusters not created yet) and annotations on
// the Cluster (the chart's clusterAnnotations value sets them).
//
// The ConfigMap (Options.RulesConfigMap, default capisim-system/capisim, the
// name the simulator used) holds under the key "rules" a YAML list:
//
//	- cluster: "quota-*"          # glob (path.Match) on the Cluster name
//	  namespace: "magnum-*"       # optional glob on its namespace
//	  infraFailure: ""            # present and empty: Octavia's quota error
//	  infraFailureTerminal: false
//	  addonFailure: "*-cni-calico"
//	  addonFailureMessage: "..."
//	  stuckRollout: true
//	  stuckDeletion: true
//	  serverQuota: true           # Nova refuses new servers: quota exceeded
//	  serverError: "*-md-0-*"     # glob of OpenStackMachine names: ERROR
//	  serverLost: "*-md-0-*"      # glob: the server vanishes once running
//	  bootDelay: 30s              # servers stay BUILD this long
//	  kubeletVersion: v1.32.5     # nodes report this kubelet version
//	  apiServerDown: true         # the API load balancer stops answering

// Annotation keys on a Cluster that inject faults into it.
const (
	annotationPrefix = "capisim.magnum-capi.io/"
	// AnnotationInfraFailure makes CAPO fail to create the API load
	// balancer; the value is the OpenStack error (empty: DefaultInfraFailure).
	AnnotationInfraFailure = annotationPrefix + "infra-failure"
	// AnnotationInfraFailureTerminal "true" makes the infra failure terminal.
	AnnotationInfraFailureTerminal = annotationPrefix + "infra-failure-terminal"
	// AnnotationAddonFailure is a glob of addon object names that fail.
	AnnotationAddonFailure = annotationPrefix + "addon-failure"
	// AnnotationAddonFailureMessage is the failed addons' status.failureMessage.
	AnnotationAddonFailureMessage = annotationPrefix + "addon-failure-message"
	// AnnotationStuckRollout "true": replacement servers never leave BUILD.
	AnnotationStuckRollout = annotationPrefix + "stuck-rollout"
	// AnnotationStuckDeletion "true": Neutron refuses to delete the network.
	AnnotationStuckDeletion = annotationPrefix + "stuck-deletion"
	// AnnotationServerQuota "true": Nova refuses to create servers.
	AnnotationServerQuota = annotationPrefix + "server-quota"
	// AnnotationServerError is a glob of OpenStackMachine names whose
	// server goes to ERROR instead of ACTIVE.
	AnnotationServerError = annotationPrefix + "server-error"
	// AnnotationServerLost is a glob of OpenStackMachine names whose server
	// disappears from Nova once it is running.
	AnnotationServerLost = annotationPrefix + "server-lost"
	// AnnotationBootDelay is how long servers stay BUILD (a Go duration).
	AnnotationBootDelay = annotationPrefix + "boot-delay"
	// AnnotationKubeletVersion is the kubelet version nodes report.
	AnnotationKubeletVersion = annotationPrefix + "kubelet-version"
	// AnnotationAPIServerDown "true": the workload cluster's API endpoint
	// stops answering (connections are refused).
	AnnotationAPIServerDown = annotationPrefix + "api-server-down"
)

// RulesConfigMapKey is the ConfigMap data key holding the YAML list of rules.
const RulesConfigMapKey = "rules"

// DefaultInfraFailure is the error CAPO v0.14 reports when Octavia refuses to
// create the API server load balancer because the project's quota is used
// up: gophercloud's unexpected-response error carrying Octavia's 403 body.
const DefaultInfraFailure = `Expected HTTP response code [201 202] when accessing [POST https://octavia.example.test:9876/v2.0/lbaas/loadbalancers], but got 403 instead: {"faultcode": "Client", "faultstring": "Quota has been met for resources: Load Balancer", "debuginfo": null}`

// serverQuotaError is Nova's answer to a server create over the project's
// instance quota, as gophercloud reports it.
const serverQuotaError = `Expected HTTP response code [202] when accessing [POST https://nova.example.test:8774/v2.1/servers], but got 403 instead: {"forbidden": {"code": 403, "message": "Quota exceeded for instances: Requested 1, but already used 10 of 10 instances"}}`

// Faults are the failures injected into one Cluster.
type Faults struct {
	// InfraFailure, when set, is the OpenStack error CAPO meets creating the
	// API load balancer. Set InfraFailureEnabled with an empty message for
	// DefaultInfraFailure.
	InfraFailure        string `json:"-"`
	InfraFailureEnabled bool   `json:"-"`
	// InfraFailureTerminal selects CAPO's terminal path (failureReason and
	// failureMessage set) instead of its retrying one.
	InfraFailureTerminal bool `json:"infraFailureTerminal,omitempty"`
	// AddonFailure is a glob (path.Match) of addon object names that end
	// Failed, with AddonFailureMessage as status.failureMessage.
	AddonFailure        string `json:"addonFailure,omitempty"`
	AddonFailureMessage string `json:"addonFailureMessage,omitempty"`
	// StuckRollout keeps servers of replacement machines (cloned from a
	// machine template newer than the first one of their node group) in
	// BUILD for ever.
	StuckRollout bool `json:"stuckRollout,omitempty"`
	// StuckDeletion makes Neutron refuse to delete the cluster network, so
	// the OpenStackCluster keeps its finalizer.
	StuckDeletion bool `json:"stuckDeletion,omitempty"`
	// ServerQuota makes Nova refuse every new server (quota exceeded).
	ServerQuota bool `json:"serverQuota,omitempty"`
	// ServerError is a glob of OpenStackMachine names whose server ends in
	// ERROR instead of ACTIVE.
	ServerError string `json:"serverError,omitempty"`
	// ServerLost is a glob of OpenStackMachine names whose server vanishes
	// from Nova once it is ACTIVE (and whose Node the cloud controller
	// manager then deletes).
	ServerLost string `json:"serverLost,omitempty"`
	// BootDelay is how long servers stay BUILD.
	BootDelay Duration `json:"bootDelay,omitempty"`
	// KubeletVersion, when set, is the kubelet version nodes report instead
	// of their Machine's spec.version (an image whose kubelet differs from
	// its kube_version property).
	KubeletVersion string `json:"kubeletVersion,omitempty"`
	// APIServerDown makes the workload cluster's API endpoint refuse
	// connections (its load balancer has failed), so every controller that
	// talks to the workload cluster fails until it is cleared.
	APIServerDown bool `json:"apiServerDown,omitempty"`
}

// Duration is a time.Duration written as a Go duration string in YAML.
type Duration struct{ time.Duration }

func (d Duration) MarshalJSON() ([]byte, error) { return []byte(strconv.Quote(d.String())), nil }

func (d *Duration) UnmarshalJSON(b []byte) error {
	s, err := strconv.Unquote(string(b))
	if err != nil {
		return fmt.Errorf("a duration must be a string such as \"30s\": %s", b)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	d.Duration = v
	return nil
}

// infraFailureMessage is the error text of the infra failure, or "".
func (f Faults) infraFailureMessage() string {
	if !f.InfraFailureEnabled && f.InfraFailure == "" {
		return ""
	}
	if f.InfraFailure == "" {
		return DefaultInfraFailure
	}
	return f.InfraFailure
}

// addonFails reports whether the addon object called name must fail, and
// the failure message asked for ("" lets the addon reconciler word it).
func (f Faults) addonFails(name string) (bool, string) {
	if !globMatch(f.AddonFailure, name) {
		return false, ""
	}
	return true, f.AddonFailureMessage
}

func globMatch(glob, name string) bool {
	if glob == "" {
		return false
	}
	ok, err := path.Match(glob, name)
	return err == nil && ok
}

// merge overlays o on f: set fields of o win.
func (f Faults) merge(o Faults) Faults {
	if o.InfraFailureEnabled || o.InfraFailure != "" {
		f.InfraFailure, f.InfraFailureEnabled = o.InfraFailure, true
	}
	f.InfraFailureTerminal = f.InfraFailureTerminal || o.InfraFailureTerminal
	if o.AddonFailure != "" {
		f.AddonFailure = o.AddonFailure
		f.AddonFailureMessage = o.AddonFailureMessage
	}
	f.StuckRollout = f.StuckRollout || o.StuckRollout
	f.StuckDeletion = f.StuckDeletion || o.StuckDeletion
	f.ServerQuota = f.ServerQuota || o.ServerQuota
	if o.ServerError != "" {
		f.ServerError = o.ServerError
	}
	if o.ServerLost != "" {
		f.ServerLost = o.ServerLost
	}
	if o.BootDelay.Duration != 0 {
		f.BootDelay = o.BootDelay
	}
	if o.KubeletVersion != "" {
		f.KubeletVersion = o.KubeletVersion
	}
	f.APIServerDown = f.APIServerDown || o.APIServerDown
	return f
}

// Rule applies Faults to the Clusters whose name (and namespace, when set)
// match the globs.
type Rule struct {
	Cluster   string `json:"cluster"`
	Namespace string `json:"namespace,omitempty"`
	Faults    `json:",inline"`
}

func (r Rule) matches(namespace, name string) bool {
	if !globMatch(r.Cluster, name) {
		return false
	}
	return r.Namespace == "" || globMatch(r.Namespace, namespace)
}

// ruleYAML is a Rule as written in the ConfigMap. infraFailure is a pointer
// so that a present but empty value selects the default quota error.
type ruleYAML struct {
	Rule         `json:",inline"`
	InfraFailure *string `json:"infraFailure,omitempty"`
}

// ParseRules reads the YAML list of rules kept in the ConfigMap.
func ParseRules(data string) ([]Rule, error) {
	var raw []ruleYAML
	if err := yaml.UnmarshalStrict([]byte(data), &raw); err != nil {
		return nil, fmt.Errorf("fault rules: %w", err)
	}
	rules := make([]Rule, 0, len(raw))
	for i, r := range raw {
		if r.Cluster == "" {
			return nil, fmt.Errorf("fault rule %d: cluster (a glob of Cluster names) is required", i)
		}
		for field, glob := range map[string]string{
			"cluster": r.Cluster, "namespace": r.Namespace, "addonFailure": r.AddonFailure,
			"serverError": r.ServerError, "serverLost": r.ServerLost,
		} {
			if _, err := path.Match(glob, ""); err != nil {
				return nil, fmt.Errorf("fault rule %d: %s %q is not a valid glob: %w", i, field, glob, err)
			}
		}
		rule := r.Rule
		if r.InfraFailure != nil {
			rule.InfraFailure, rule.InfraFailureEnabled = *r.InfraFailure, true
		}
		rules = append(rules, rule)
	}
	return rules, nil
}

// faultsFromAnnotations reads the fault annotations of a Cluster; an
// unreadable boot delay is ignored (and so is any other malformed value).
func faultsFromAnnotations(annotations map[string]string) Faults {
	var f Faults
	if msg, ok := annotations[AnnotationInfraFailure]; ok {
		f.InfraFailure, f.InfraFailureEnabled = msg, true
	}
	f.InfraFailureTerminal = isTrue(annotations[AnnotationInfraFailureTerminal])
	f.AddonFailure = annotations[AnnotationAddonFailure]
	f.AddonFailureMessage = annotations[AnnotationAddonFailureMessage]
	f.StuckRollout = isTrue(annotations[AnnotationStuckRollout])
	f.StuckDeletion = isTrue(annotations[AnnotationStuckDeletion])
	f.ServerQuota = isTrue(annotations[AnnotationServerQuota])
	f.ServerError = annotations[AnnotationServerError]
	f.ServerLost = annotations[AnnotationServerLost]
	if d, err := time.ParseDuration(annotations[AnnotationBootDelay]); err == nil {
		f.BootDelay.Duration = d
	}
	f.KubeletVersion = annotations[AnnotationKubeletVersion]
	f.APIServerDown = isTrue(annotations[AnnotationAPIServerDown])
	return f
}

func isTrue(s string) bool {
	b, err := strconv.ParseBool(s)
	return err == nil && b
}

// faultBook holds the rules read from the ConfigMap.
type faultBook struct {
	mu    sync.RWMutex
	rules []Rule
}

func (b *faultBook) setRules(rules []Rule) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.rules = append([]Rule(nil), rules...)
}

// faultsFor merges, for one Cluster, the matching rules in order, then the
// Cluster's annotations; later sources win.
func (b *faultBook) faultsFor(namespace, name string, annotations map[string]string) Faults {
	b.mu.RLock()
	defer b.mu.RUnlock()
	var f Faults
	for _, r := range b.rules {
		if r.matches(namespace, name) {
			f = f.merge(r.Faults)
		}
	}
	return f.merge(faultsFromAnnotations(annotations))
}
