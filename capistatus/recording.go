package capistatus

import (
	"encoding/json"
	"fmt"
	"time"
)

// Recording is request.json of a snapshot recorded from the test bed's real
// Cluster API controllers: Magnum's side of the status question, the rows of
// docs/status.md the snapshot verifies and any Config overrides. The
// end-to-end test that records snapshots writes it and TestRecordedSnapshots
// replays it; one declaration keeps the writer and the reader in step.
type Recording struct {
	Rows              []string          `json:"rows"`
	Status            string            `json:"status"`
	StackID           string            `json:"stack_id"`
	OperationStarted  time.Time         `json:"operation_started"`
	CreateTimeout     Duration          `json:"create_timeout"`
	ReleaseExists     bool              `json:"release_exists"`
	NodeGroups        []NodeGroup       `json:"node_groups"`
	CurrentAPIAddress string            `json:"current_api_address"`
	CurrentCOEVersion string            `json:"current_coe_version"`
	Now               time.Time         `json:"now"`
	Overrides         map[string]string `json:"config,omitempty"`
}

// Request is the question the recording asks Derive and DeriveHealth.
func (r Recording) Request() Request {
	return Request{
		Status: r.Status, StackID: r.StackID, OperationStarted: r.OperationStarted,
		CreateTimeout: r.CreateTimeout.Duration, ReleaseExists: r.ReleaseExists, NodeGroups: r.NodeGroups,
		CurrentAPIAddress: r.CurrentAPIAddress, CurrentCOEVersion: r.CurrentCOEVersion, Now: r.Now,
	}
}

// Config is DefaultConfig with the recording's overrides (Go durations
// keyed by the sidecar's option names).
func (r Recording) Config() (Config, error) {
	cfg := DefaultConfig()
	fields := map[string]*time.Duration{
		"update_timeout":         &cfg.UpdateTimeout,
		"delete_timeout":         &cfg.DeleteTimeout,
		"addon_failure_grace":    &cfg.AddonFailureGrace,
		"default_create_timeout": &cfg.DefaultCreateTimeout,
	}
	for k, v := range r.Overrides {
		field, ok := fields[k]
		if !ok {
			return Config{}, fmt.Errorf("config %s: unknown", k)
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			return Config{}, fmt.Errorf("config %s: %w", k, err)
		}
		*field = d
	}
	return cfg, nil
}

// Duration is a time.Duration written as a Go duration string ("1h0m0s").
type Duration struct{ time.Duration }

func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	d.Duration = v
	return err
}
