package server

import (
	"testing"
	"time"

	"github.com/magnum-capi/magnum-capi/server/config"
)

// TestClientLimits: a management cluster's qps, burst and requestTimeout
// reach its client; unset ones are the documented defaults.
func TestClientLimits(t *testing.T) {
	tests := []struct {
		name    string
		mc      config.ManagementCluster
		qps     float32
		burst   int
		timeout time.Duration
	}{
		{"defaults", config.ManagementCluster{}, 50, 100, 30 * time.Second},
		{"all set", config.ManagementCluster{QPS: 400, Burst: 800, RequestTimeout: 2 * time.Minute}, 400, 800, 2 * time.Minute},
		{"rate above the default burst", config.ManagementCluster{QPS: 250.5}, 250.5, 251, 30 * time.Second},
		{"burst only", config.ManagementCluster{Burst: 10}, 50, 10, 30 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			qps, burst, timeout := clientLimits(tt.mc)
			if qps != tt.qps || burst != tt.burst || timeout != tt.timeout {
				t.Errorf("clientLimits = %v, %d, %s; want %v, %d, %s", qps, burst, timeout, tt.qps, tt.burst, tt.timeout)
			}
		})
	}
}
