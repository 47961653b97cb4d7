package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/magnum-capi/magnum-capi/helmvalues"
	"github.com/magnum-capi/magnum-capi/test/harness"
)

// BenchmarkTestBed is the test bed's own figure, not a target of the
// driver: how many clusters the real Cluster API controllers
// (test/capicontrollers: core, kubeadm control plane and bootstrap v1.13
// with CAPI's in-memory workload clusters) build at once on this machine,
// how long each takes to CREATE_COMPLETE and what that costs in memory.
//
// MAGNUM_CAPI_BENCH_TESTBED_CLUSTERS clusters (default 100; one control
// plane machine and one worker, as e2e's) are created through the in-process
// sidecar's CreateCluster at once (one token and one set of authorities for
// all); each is then polled every second, as Magnum's periodic job would
// (more often), until CREATE_COMPLETE. Its time is from its CreateCluster
// call to the first answer CREATE_COMPLETE. Every 2 seconds the resident
// memory of the controllers process (which also holds every workload
// cluster's in-memory API server and etcd), of kube-apiserver and of etcd
// is sampled, and the load average. Then all are deleted, 20 at a time,
// to DELETE_COMPLETE, and nothing of theirs may be left.
func BenchmarkTestBed(b *testing.B) {
	w := stackFor(b)
	n := envInt(b, "MAGNUM_CAPI_BENCH_TESTBED_CLUSTERS", 100)
	ns := helmvalues.Namespace("magnum", w.stack.Info.Project.ID)
	procs, err := childProcesses("capi-controllers", "kube-apiserver", "etcd")
	if err != nil {
		b.Fatal(err)
	}
	mem := sampleMemory(procs, 2*time.Second)

	clusters := batch(b, w, "testbed", n)
	took := make([]time.Duration, n)
	errs := make([]error, n)
	began := time.Now()
	var wg sync.WaitGroup
	for i, c := range clusters {
		wg.Go(func() {
			t0 := time.Now()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
			err := c.create(ctx, w.driver)
			cancel()
			if err == nil {
				_, err = harness.WaitForStatus(w.driver, c.Spec, "CREATE_COMPLETE", 60*time.Minute, time.Second)
			}
			took[i], errs[i] = time.Since(t0), err
		})
	}
	wg.Wait()
	wall := time.Since(began)
	peak := mem.stop()

	failed := 0
	for i, err := range errs {
		if err != nil {
			failed++
			b.Errorf("cluster %d: %v", i, err)
		}
	}
	resting := map[string]float64{}
	for name, pid := range procs {
		if rss, _, err := pidMemory(pid); err == nil {
			resting[name] = rss
		}
	}
	summary := fmt.Sprintf("%d clusters (1 control plane + 1 worker each) created at once: %d failed; all CREATE_COMPLETE after %s; per cluster p50 %s p90 %s max %s; "+
		"RSS once complete (peak while creating): capi-controllers %.0f MiB (%.0f), kube-apiserver %.0f MiB (%.0f), etcd %.0f MiB (%.0f); load average while creating %s",
		n, failed, wall.Round(time.Second), percentile(took, 50).Round(time.Second), percentile(took, 90).Round(time.Second), percentile(took, 100).Round(time.Second),
		resting["capi-controllers"], peak.rss["capi-controllers"], resting["kube-apiserver"], peak.rss["kube-apiserver"], resting["etcd"], peak.rss["etcd"], peak.load)
	b.Log(summary)
	progress("%s", summary)
	b.ReportMetric(float64(n-failed), "complete")
	b.ReportMetric(wall.Seconds(), "wall-s")
	b.ReportMetric(percentile(took, 50).Seconds(), "p50-s")
	b.ReportMetric(percentile(took, 100).Seconds(), "max-s")
	b.ReportMetric(resting["capi-controllers"], "controllers-MiB")
	b.ReportMetric(0, "ns/op")

	deleteTook := deleteAll(b, w.driver, clusters, 30*time.Minute)
	after := map[string]float64{}
	for name, pid := range procs {
		if rss, _, err := pidMemory(pid); err == nil {
			after[name] = rss
		}
	}
	msg := fmt.Sprintf("deleted %d clusters, %d at a time, in %s; RSS after: capi-controllers %.0f MiB, kube-apiserver %.0f MiB, etcd %.0f MiB",
		n-failed, deleteParallel, deleteTook.Round(time.Second), after["capi-controllers"], after["kube-apiserver"], after["etcd"])
	b.Log(msg)
	progress("%s", msg)
	for _, leak := range leftovers(b, w.kube, ns, clusters) {
		b.Errorf("left after delete: %s", leak)
	}
}

// childProcesses finds this process's children running the named
// programs (the test bed's kube-apiserver, etcd and controllers are
// started by it): name -> pid.
func childProcesses(names ...string) (map[string]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	self := os.Getpid()
	found := map[string]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so read after ')'.
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(fields) < 2 || fields[1] != strconv.Itoa(self) {
			continue
		}
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil {
			continue
		}
		if name := filepath.Base(strings.SplitN(string(cmdline), "\x00", 2)[0]); want[name] {
			found[name] = pid
		}
	}
	for _, n := range names {
		if found[n] == 0 {
			return nil, fmt.Errorf("no child process %s of this process", n)
		}
	}
	return found, nil
}

// memorySampler records the highest RSS of some processes and the load
// averages seen, until stopped.
type memorySampler struct {
	done chan struct{}
	out  chan memoryPeak
}

type memoryPeak struct {
	rss map[string]float64
	// load is the range of one-minute load averages seen ("3.1–7.9").
	load string
}

func sampleMemory(procs map[string]int, every time.Duration) *memorySampler {
	s := &memorySampler{done: make(chan struct{}), out: make(chan memoryPeak, 1)}
	go func() {
		peak := memoryPeak{rss: map[string]float64{}}
		lo, hi := -1.0, 0.0
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			for name, pid := range procs {
				if rss, _, err := pidMemory(pid); err == nil {
					peak.rss[name] = max(peak.rss[name], rss)
				}
			}
			if raw, err := os.ReadFile("/proc/loadavg"); err == nil {
				if l, err := strconv.ParseFloat(strings.Fields(string(raw))[0], 64); err == nil {
					if lo < 0 || l < lo {
						lo = l
					}
					hi = max(hi, l)
				}
			}
			select {
			case <-s.done:
				peak.load = fmt.Sprintf("%.1f–%.1f", lo, hi)
				s.out <- peak
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

func (s *memorySampler) stop() memoryPeak {
	close(s.done)
	return <-s.out
}
