package capisim

import (
	"log/slog"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Options tune the simulator. The zero value is usable.
type Options struct {
	// Step is the delay between two simulated steps of one object (an
	// instance becoming ACTIVE, a node joining, an addon installing, a
	// finalizer being released...). Default 200ms.
	Step time.Duration
	// Rules are fault rules set from Go; see the package documentation.
	Rules []Rule
	// RulesConfigMap is the ConfigMap read for fault rules at run time.
	// Default capisim-system/capisim.
	RulesConfigMap types.NamespacedName
	// Workers is the number of concurrent reconciles per kind. Default 8.
	Workers int
	// Logger receives the controllers' logs; nil discards them.
	Logger *slog.Logger
}

// DefaultRulesConfigMap is where the simulator looks for fault rules unless
// Options.RulesConfigMap says otherwise.
var DefaultRulesConfigMap = types.NamespacedName{Namespace: "capisim-system", Name: "capisim"}

const (
	defaultStep    = 200 * time.Millisecond
	defaultWorkers = 8
)

func (o Options) withDefaults() Options {
	if o.Step <= 0 {
		o.Step = defaultStep
	}
	if o.RulesConfigMap.Name == "" {
		o.RulesConfigMap = DefaultRulesConfigMap
	}
	if o.Workers <= 0 {
		o.Workers = defaultWorkers
	}
	return o
}
