package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/magnum-capi/magnum-capi/server/config"
	"github.com/magnum-capi/magnum-capi/test/harness"
)

// process is the real magnum-capi binary serving the stack, for its RSS.
type process struct {
	*harness.Sidecar
	// synced is how long it took to serve (its caches listed everything).
	synced time.Duration
	// metrics is its metrics server, which also serves Go's profiles.
	metrics string
}

// binary is the magnum-capi binary the process runs
// (harness.SidecarBinary): make bench passes bin/magnum-capi.
func binary(b *testing.B, w *world) string {
	bin, err := w.stack.SidecarBinary()
	if err != nil {
		b.Fatal(err)
	}
	return bin
}

// startProcess runs `magnum-capi serve` with the benchmarks'
// configuration, metrics and profiles on, and waits until it serves. It
// waits up to 15 minutes: at 10,000 clusters the first lists take minutes
// on this machine (the API server itself holds 13–20 GB then).
func startProcess(b *testing.B, w *world, bin string) *process {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	const name = "proc"
	dir, err := os.MkdirTemp(w.stack.Info.Dir, name+"-")
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	sc, err := w.stack.StartSidecar(ctx, harness.SidecarOptions{Name: name, Dir: dir, Binary: bin, Metrics: true, Configure: func(c *config.Config) {
		benchConfig(c)
		c.Pprof = true
	}})
	if err != nil {
		// The stack's directory goes with the benchmark: keep the log
		// that says why it did not serve.
		keepLog(harness.SidecarLogFile(dir, name))
		b.Fatal(err)
	}
	b.Cleanup(func() { keepLog(sc.LogFile) })
	b.Cleanup(func() { _ = sc.Stop() })
	return &process{Sidecar: sc, synced: time.Since(start), metrics: sc.Config.MetricsAddress}
}

// memory reads VmRSS and VmHWM (peak RSS) of the process, in MiB.
func (p *process) memory() (rss, hwm float64, err error) { return pidMemory(p.Pid()) }

// pidMemory reads VmRSS and VmHWM (peak RSS) of process pid, in MiB.
func pidMemory(pid int) (rss, hwm float64, err error) {
	m, err := pidStatus(pid)
	if err != nil {
		return 0, 0, err
	}
	if m["VmRSS"] == 0 {
		return 0, 0, fmt.Errorf("/proc/%d/status has no VmRSS", pid)
	}
	return m["VmRSS"], m["VmHWM"], nil
}

// rssParts says what the process's RSS is made of, in MiB: RssAnon (its
// own memory: Go's heap, stacks, the runtime's) and RssFile (the pages of
// its binary it has touched, shared with any other process mapping it).
func (p *process) rssParts() (anon, file float64, err error) {
	m, err := pidStatus(p.Pid())
	return m["RssAnon"], m["RssFile"], err
}

// pidStatus reads the sizes /proc/<pid>/status gives in kB, in MiB by
// name without the colon.
func pidStatus(pid int) (map[string]float64, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, err
	}
	m := map[string]float64{}
	for _, line := range strings.Split(string(raw), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || f[2] != "kB" {
			continue
		}
		kb, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			return nil, fmt.Errorf("/proc/%d/status: %q: %w", pid, line, err)
		}
		m[strings.TrimSuffix(f[0], ":")] = kb / 1024
	}
	return m, nil
}

// heap collects the process's garbage and reads its heap profile: the
// live heap's size in MiB (what the watch cache holds, without the GC's
// headroom that RSS includes). With dir set, the profile is kept there as
// name, for go tool pprof.
func (p *process) heap(dir, name string) (float64, error) {
	get := func(query string) ([]byte, error) { return p.get("/debug/pprof/" + query) }
	if dir != "" {
		// allocs: every allocation since the start (the polls' included).
		for _, profile := range []string{"heap", "allocs"} {
			raw, err := get(profile + "?gc=1")
			if err != nil {
				return 0, err
			}
			if err := os.WriteFile(filepath.Join(dir, profile+"-"+name), raw, 0o644); err != nil {
				return 0, err
			}
		}
	}
	raw, err := get("heap?gc=1&debug=1")
	if err != nil {
		return 0, err
	}
	if dir != "" {
		if err := os.WriteFile(filepath.Join(dir, "heap-"+name+".txt"), raw, 0o644); err != nil {
			return 0, err
		}
	}
	// The text form ends with runtime.MemStats: "# HeapAlloc = 123".
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "# HeapAlloc = "); ok {
			n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return n / (1 << 20), err
		}
	}
	return 0, fmt.Errorf("the heap profile has no HeapAlloc line")
}

// cpuProfile, with dir set, records the process's CPU profile for the
// next d into dir/name, in the background; the channel says how it went.
func (p *process) cpuProfile(dir, name string, d time.Duration) <-chan error {
	return p.keep(dir, name, fmt.Sprintf("/debug/pprof/profile?seconds=%d", int(d.Seconds())))
}

// trace, with dir set, records the process's execution trace (go tool
// trace) for the next d into dir/name, in the background, like cpuProfile.
func (p *process) trace(dir, name string, d time.Duration) <-chan error {
	return p.keep(dir, name, fmt.Sprintf("/debug/pprof/trace?seconds=%d", int(d.Seconds())))
}

// keep, with dir set, writes what the metrics server answers at path to
// dir/name, in the background; the channel says how it went.
func (p *process) keep(dir, name, path string) <-chan error {
	done := make(chan error, 1)
	if dir == "" {
		done <- nil
		return done
	}
	go func() {
		raw, err := p.get(path)
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, name), raw, 0o644)
		}
		done <- err
	}()
	return done
}

// statusHistogram reads the process's GetClusterStatus duration histogram
// (magnum_capi_rpc_duration_seconds, measured in the server from the call's
// arrival to its answer, without the client and the socket): cumulative
// counts by upper bound in seconds.
func (p *process) statusHistogram() (map[float64]float64, error) {
	raw, err := p.get("/metrics")
	if err != nil {
		return nil, err
	}
	return parseStatusHistogram(raw)
}

// get is the body of a GET of path on the process's metrics server, which
// must answer 200.
func (p *process) get(path string) ([]byte, error) {
	resp, err := http.Get("http://" + p.metrics + path)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	return raw, err
}

// parseStatusHistogram reads the GetClusterStatus buckets of successful
// calls from Prometheus's text exposition.
func parseStatusHistogram(raw []byte) (map[float64]float64, error) {
	out := map[float64]float64{}
	for _, line := range strings.Split(string(raw), "\n") {
		if !strings.HasPrefix(line, "magnum_capi_rpc_duration_seconds_bucket{") || !strings.Contains(line, `/GetClusterStatus"`) || !strings.Contains(line, `code="OK"`) {
			continue
		}
		_, rest, _ := strings.Cut(line, `le="`)
		le, rest, _ := strings.Cut(rest, `"`)
		bound, err := strconv.ParseFloat(le, 64) // +Inf parses too
		if err != nil {
			return nil, fmt.Errorf("/metrics: %q: %w", line, err)
		}
		f := strings.Fields(rest)
		n, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			return nil, fmt.Errorf("/metrics: %q: %w", line, err)
		}
		out[bound] = n
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("/metrics has no GetClusterStatus durations")
	}
	return out, nil
}

// histogramShare is, between two readings of a cumulative histogram, the
// share of calls within bound and the smallest bound that holds at least
// share p of them (an upper bound of the p-quantile).
func histogramShare(before, after map[float64]float64, bound, p float64) (within, quantileBound float64) {
	total := after[math.Inf(1)] - before[math.Inf(1)]
	if total <= 0 {
		return 0, 0
	}
	within = (after[bound] - before[bound]) / total
	bounds := make([]float64, 0, len(after))
	for b := range after {
		bounds = append(bounds, b)
	}
	slices.Sort(bounds)
	for _, b := range bounds {
		if (after[b]-before[b])/total >= p {
			return within, b
		}
	}
	return within, math.Inf(1)
}

// helmSeconds reads the process's helm_operation_duration_seconds: the
// seconds spent and the count of successful operations, by operation
// (install, upgrade, ...).
func (p *process) helmSeconds() (map[string][2]float64, error) {
	raw, err := p.get("/metrics")
	if err != nil {
		return nil, err
	}
	return parseHelmSeconds(raw)
}

func parseHelmSeconds(raw []byte) (map[string][2]float64, error) {
	out := map[string][2]float64{}
	for _, line := range strings.Split(string(raw), "\n") {
		series, value, ok := strings.Cut(line, " ")
		if !ok || !strings.HasPrefix(series, "magnum_capi_helm_operation_duration_seconds_") || !strings.Contains(series, `outcome="success"`) {
			continue
		}
		i := 0
		switch {
		case strings.HasPrefix(series, "magnum_capi_helm_operation_duration_seconds_sum{"):
		case strings.HasPrefix(series, "magnum_capi_helm_operation_duration_seconds_count{"):
			i = 1
		default:
			continue
		}
		_, op, _ := strings.Cut(series, `operation="`)
		op, _, _ = strings.Cut(op, `"`)
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			return nil, fmt.Errorf("/metrics: %q: %w", line, err)
		}
		got := out[op]
		got[i] = v
		out[op] = got
	}
	return out, nil
}
