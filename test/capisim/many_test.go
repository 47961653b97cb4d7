package capisim_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"
)

// manyClusters is how many releases TestManyClustersAtOnce runs side by
// side; CAPISIM_CLUSTERS overrides it (the load test will run 200).
func manyClusters(def int) int {
	if n, err := strconv.Atoi(os.Getenv("CAPISIM_CLUSTERS")); err == nil && n > 0 {
		return n
	}
	return def
}

// lifecycle installs releases side by side, waits for all to be ready,
// uninstalls them and waits for all to be gone.
func lifecycle(t testing.TB, ns string, n int) {
	ctx := context.Background()
	releases := make([]release, n)
	for i := range releases {
		releases[i] = newRelease(fmt.Sprintf("many-%03d", i), ns)
		releases[i].install(t)
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	waitAll := func(check func(release) error) {
		for i, r := range releases {
			wg.Add(1)
			go func() {
				defer wg.Done()
				deadline := time.Now().Add(converge + time.Duration(n)*time.Second)
				for {
					if errs[i] = check(r); errs[i] == nil || time.Now().After(deadline) {
						return
					}
					time.Sleep(100 * time.Millisecond)
				}
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("release %s: %v", releases[i].Name, err)
			}
		}
	}
	waitAll(func(r release) error { return readyErr(ctx, r) })
	for _, r := range releases {
		r.uninstall(t)
	}
	waitAll(func(r release) error { return releaseGoneErr(ctx, r) })
}

// TestManyClustersAtOnce runs several releases in one namespace at once:
// addresses, Machine names and expectations must not mix them up.
func TestManyClustersAtOnce(t *testing.T) {
	t.Parallel()
	lifecycle(t, newNamespace(t), manyClusters(6))
}

// BenchmarkReleasesSideBySide measures one round of manyClusters releases
// installed side by side, all ready, all uninstalled and gone.
func BenchmarkReleasesSideBySide(b *testing.B) {
	n := manyClusters(10)
	for b.Loop() {
		lifecycle(b, newNamespace(b), n)
	}
	b.ReportMetric(float64(n), "clusters/op")
}
