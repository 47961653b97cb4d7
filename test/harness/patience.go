package harness

import (
	"os"
	"strconv"
	"time"
)

// Patience is how long a test waits for something it expects, given the
// bound its author chose on a quiet machine. Those bounds are where a test
// gives up, not what it asserts (the sidecar's own timeouts are what
// status tests assert), and `make test` runs the Go and Python suites side
// by side on two cores, where the controllers' pace can halve. The factor
// is MAGNUM_CAPI_PATIENCE (default 2); a failure names the scaled bound.
func Patience(d time.Duration) time.Duration {
	return time.Duration(float64(d) * patienceFactor())
}

func patienceFactor() float64 {
	if v, err := strconv.ParseFloat(os.Getenv("MAGNUM_CAPI_PATIENCE"), 64); err == nil && v > 0 {
		return v
	}
	return 2
}
