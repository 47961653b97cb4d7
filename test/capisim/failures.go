package capisim

import (
	"fmt"
	"path"
	"strconv"
	"sync"

	"sigs.k8s.io/yaml"
)

// Annotation keys on a Cluster that inject faults into it.
const (
	annotationPrefix = "capisim.magnum-capi.io/"
	// AnnotationInfraFailure makes CAPO fail to create the API load
	// balancer; the value is the OpenStack error (empty: DefaultInfraFailure).
	AnnotationInfraFailure = annotationPrefix + "infra-failure"
	// AnnotationInfraFailureTerminal "true" makes the infra failure terminal:
	// status.failureReason and status.failureMessage are set.
	AnnotationInfraFailureTerminal = annotationPrefix + "infra-failure-terminal"
	// AnnotationAddonFailure is a glob of addon object names that fail.
	AnnotationAddonFailure = annotationPrefix + "addon-failure"
	// AnnotationAddonFailureMessage is the failed addons' status.failureMessage.
	AnnotationAddonFailureMessage = annotationPrefix + "addon-failure-message"
	// AnnotationStuckRollout "true": replacement Machines never become ready.
	AnnotationStuckRollout = annotationPrefix + "stuck-rollout"
	// AnnotationStuckDeletion "true": the OpenStackCluster finalizer is never
	// removed.
	AnnotationStuckDeletion = annotationPrefix + "stuck-deletion"
)

// RulesConfigMapKey is the ConfigMap data key holding the YAML list of rules.
const RulesConfigMapKey = "rules"

// DefaultInfraFailure is the error CAPO v0.14 reports when Octavia refuses to
// create the API server load balancer because the project's quota is used
// up: gophercloud's unexpected-response error carrying Octavia's 403 body
// (Octavia's QuotaException text).
const DefaultInfraFailure = `Expected HTTP response code [201 202] when accessing [POST https://octavia.example.test:9876/v2.0/lbaas/loadbalancers], but got 403 instead: {"faultcode": "Client", "faultstring": "Quota has been met for resources: Load Balancer", "debuginfo": null}`

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
	// StuckRollout keeps replacement Machines from ever becoming ready.
	StuckRollout bool `json:"stuckRollout,omitempty"`
	// StuckDeletion keeps the OpenStackCluster finalizer forever.
	StuckDeletion bool `json:"stuckDeletion,omitempty"`
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
	if f.AddonFailure == "" {
		return false, ""
	}
	if ok, err := path.Match(f.AddonFailure, name); err != nil || !ok {
		return false, ""
	}
	return true, f.AddonFailureMessage
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
	if ok, err := path.Match(r.Cluster, name); err != nil || !ok {
		return false
	}
	if r.Namespace == "" {
		return true
	}
	ok, err := path.Match(r.Namespace, namespace)
	return err == nil && ok
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
		if _, err := path.Match(r.Cluster, ""); err != nil {
			return nil, fmt.Errorf("fault rule %d: cluster %q is not a valid glob: %w", i, r.Cluster, err)
		}
		if r.AddonFailure != "" {
			if _, err := path.Match(r.AddonFailure, ""); err != nil {
				return nil, fmt.Errorf("fault rule %d: addonFailure %q is not a valid glob: %w", i, r.AddonFailure, err)
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

// faultsFromAnnotations reads the fault annotations of a Cluster.
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
	return f
}

func isTrue(s string) bool {
	b, err := strconv.ParseBool(s)
	return err == nil && b
}

// faultBook holds the rules from Go and from the ConfigMap.
type faultBook struct {
	mu        sync.RWMutex
	goRules   []Rule
	fileRules []Rule
}

func (b *faultBook) setGoRules(rules []Rule) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.goRules = append([]Rule(nil), rules...)
}

func (b *faultBook) setConfigMapRules(rules []Rule) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.fileRules = append([]Rule(nil), rules...)
}

// faultsFor merges, for one Cluster, the Go rules, then the ConfigMap rules,
// then the Cluster's annotations; later sources win.
func (b *faultBook) faultsFor(namespace, name string, annotations map[string]string) Faults {
	b.mu.RLock()
	defer b.mu.RUnlock()
	var f Faults
	for _, rules := range [][]Rule{b.goRules, b.fileRules} {
		for _, r := range rules {
			if r.matches(namespace, name) {
				f = f.merge(r.Faults)
			}
		}
	}
	return f.merge(faultsFromAnnotations(annotations))
}
