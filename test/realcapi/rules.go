package realcapi

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// RulesConfigMap is where the controllers read fault rules:
// namespace/name, key "rules".
const (
	RulesNamespace = "capisim-system"
	RulesName      = "capisim"
)

// FaultRule is one fault rule, as test/capicontrollers/fault.go documents
// and parses it (the YAML/JSON field names are the contract; this type
// only writes them).
type FaultRule struct {
	Cluster              string  `json:"cluster"`
	Namespace            string  `json:"namespace,omitempty"`
	InfraFailure         *string `json:"infraFailure,omitempty"`
	InfraFailureTerminal bool    `json:"infraFailureTerminal,omitempty"`
	AddonFailure         string  `json:"addonFailure,omitempty"`
	AddonFailureMessage  string  `json:"addonFailureMessage,omitempty"`
	StuckRollout         bool    `json:"stuckRollout,omitempty"`
	StuckDeletion        bool    `json:"stuckDeletion,omitempty"`
	ServerQuota          bool    `json:"serverQuota,omitempty"`
	ServerError          string  `json:"serverError,omitempty"`
	ServerLost           string  `json:"serverLost,omitempty"`
	BootDelay            string  `json:"bootDelay,omitempty"`
	KubeletVersion       string  `json:"kubeletVersion,omitempty"`
	APIServerDown        bool    `json:"apiServerDown,omitempty"`
}

// OctaviaQuota is the value of InfraFailure that selects the default
// error: Octavia's load balancer quota.
var OctaviaQuota = ptr("")

func ptr[T any](v T) *T { return &v }

// SetFaultRules replaces the rules in the ConfigMap (creating it and its
// namespace); no rules clears them.
func SetFaultRules(ctx context.Context, c client.Client, rules ...FaultRule) error {
	if rules == nil {
		rules = []FaultRule{}
	}
	data, err := json.Marshal(rules)
	if err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: RulesNamespace}}
	if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", RulesNamespace, err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: RulesNamespace, Name: RulesName}}
	err = c.Get(ctx, client.ObjectKeyFromObject(cm), cm)
	cm.Data = map[string]string{"rules": string(data)}
	switch {
	case apierrors.IsNotFound(err):
		err = c.Create(ctx, cm)
	case err == nil:
		err = c.Update(ctx, cm)
	}
	if err != nil {
		return fmt.Errorf("writing the fault rules ConfigMap: %w", err)
	}
	return nil
}

// Rules keeps the fault rules of several tests running at once in the one
// ConfigMap: each test sets and clears its own, by a key of its choosing.
type Rules struct {
	c     client.Client
	mu    sync.Mutex
	byKey map[string][]FaultRule
}

// NewRules writes rules through c.
func NewRules(c client.Client) *Rules { return &Rules{c: c, byKey: map[string][]FaultRule{}} }

// Set replaces the rules under key (none: removes them) and writes all.
func (r *Rules) Set(ctx context.Context, key string, rules ...FaultRule) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(rules) == 0 {
		delete(r.byKey, key)
	} else {
		r.byKey[key] = rules
	}
	keys := make([]string, 0, len(r.byKey))
	for k := range r.byKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var all []FaultRule
	for _, k := range keys {
		all = append(all, r.byKey[k]...)
	}
	return SetFaultRules(ctx, r.c, all...)
}
