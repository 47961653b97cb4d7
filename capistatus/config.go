package capistatus

import "time"

// DefaultConfig is used for every Config field left zero.
//
//   - DefaultCreateTimeout matches Magnum's own default create_timeout (60 min).
//   - UpdateTimeout is longer because a rolling upgrade replaces every machine
//     one at a time (the chart's MachineDeployments use maxSurge 0,
//     maxUnavailable 1); large clusters need more.
//   - DeleteTimeout covers CAPO removing servers, ports, the API load balancer
//     and the network, plus the janitor's volumes and load balancers.
//   - AddonFailureGrace lets the addon provider retry a failed Helm release
//     before the cluster is declared failed.
func DefaultConfig() Config {
	return Config{
		UpdateTimeout:        120 * time.Minute,
		DeleteTimeout:        30 * time.Minute,
		AddonFailureGrace:    10 * time.Minute,
		DefaultCreateTimeout: 60 * time.Minute,
	}
}

func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.UpdateTimeout <= 0 {
		c.UpdateTimeout = d.UpdateTimeout
	}
	if c.DeleteTimeout <= 0 {
		c.DeleteTimeout = d.DeleteTimeout
	}
	if c.AddonFailureGrace <= 0 {
		c.AddonFailureGrace = d.AddonFailureGrace
	}
	if c.DefaultCreateTimeout <= 0 {
		c.DefaultCreateTimeout = d.DefaultCreateTimeout
	}
	return c
}

// timeout is how long the operation named by status may take.
func (c Config) timeout(status string, createTimeout time.Duration) time.Duration {
	switch operation(status) {
	case "CREATE":
		if createTimeout > 0 {
			return createTimeout
		}
		return c.DefaultCreateTimeout
	case "DELETE":
		return c.DeleteTimeout
	default: // UPDATE, ROLLBACK
		return c.UpdateTimeout
	}
}
