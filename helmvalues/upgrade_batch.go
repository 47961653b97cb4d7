package helmvalues

import "strconv"

// WithUpgradeBatch sets, in values a Build made, how many machines of each
// node group an upgrade replaces at a time: Magnum's max_batch_size, as the
// MachineDeployments' rolling update (maxUnavailable n, maxSurge 0: within
// the group's size, the shape of the chart's own default of one at a time).
// 1 (Magnum's default) and 0 (a Magnum that sent none) leave the chart's
// default, which is the same rollout: the values then stay what any other
// operation renders, so an upgrade leaves nothing for the next update to
// change. A larger batch lasts until the next update or resize, which
// renders the chart's default again (changing the strategy replaces no
// machine). The control plane keeps its own rollout (one machine at a time,
// surging: etcd's quorum decides that, not the user).
func WithUpgradeBatch(values map[string]any, maxBatchSize int) error {
	if maxBatchSize < 0 {
		return &FieldError{Field: "max_batch_size", Value: strconv.Itoa(maxBatchSize), Expected: "a positive number of machines of a node group replaced at a time"}
	}
	if maxBatchSize <= 1 {
		return nil
	}
	put(values, map[string]any{
		"type": "RollingUpdate",
		"rollingUpdate": map[string]any{
			"maxUnavailable": maxBatchSize,
			"maxSurge":       0,
			"deletePolicy":   "Random",
		},
	}, "nodeGroupDefaults", "rolloutStrategy")
	return nil
}
