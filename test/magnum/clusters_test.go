package magnum

import (
	"errors"
	"testing"
)

// TestHalfDestroyed: the waits for a cluster to be gone keep polling
// through Magnum's own half-destroyed answer, and only through it.
func TestHalfDestroyed(t *testing.T) {
	cli := func(output string) error {
		return &CLIError{Args: []string{"coe", "cluster", "show", "demo"}, Output: output}
	}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"Magnum 20 between the node groups' and the cluster's destroy",
			cli("Invalid input for field/attribute master_count. Value: '0'. Value should be greater or equal to 1 (HTTP 400) (Request-ID: req-1)"), true},
		{"the same for node_count", cli("Invalid input for field/attribute node_count (HTTP 400)"), true},
		{"another bad request", cli("Invalid input for field/attribute name (HTTP 400)"), false},
		{"gone", cli("Cluster demo could not be found (HTTP 404)"), false},
		{"not the CLI", errors.New("Invalid input for field/attribute master_count (HTTP 400)"), false},
		{"no error", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := halfDestroyed(tt.err); got != tt.want {
				t.Errorf("halfDestroyed(%v) = %t, want %t", tt.err, got, tt.want)
			}
		})
	}
}
