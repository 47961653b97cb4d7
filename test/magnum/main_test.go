package magnum

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The cloud and its lanes start once per test binary, shared by the tests.
var (
	cloud     *Cloud
	lanes     = map[int]*Lane{}
	laneErrs  = map[int]error{}
	cloudErr  error
	startOnce sync.Once
)

// selectedReleases are the releases to run: all, or MAGNUM_CAPI_RELEASES
// (e.g. "15,23") while working on one.
func selectedReleases() []Release {
	want := os.Getenv("MAGNUM_CAPI_RELEASES")
	if want == "" {
		return Releases
	}
	var out []Release
	for _, r := range Releases {
		for _, w := range strings.Split(want, ",") {
			if strings.TrimSpace(w) == strconv.Itoa(r.Major) {
				out = append(out, r)
			}
		}
	}
	return out
}

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	for _, l := range lanes {
		l.Stop()
	}
	if cloud != nil {
		if os.Getenv("MAGNUM_CAPI_KEEP_CLOUD") != "" {
			fmt.Println("cloud kept in", cloud.Dir)
		}
		cloud.Stop()
		if code == 0 && os.Getenv("MAGNUM_CAPI_KEEP_CLOUD") == "" {
			os.RemoveAll(cloud.Dir)
		}
	}
	os.Exit(code)
}

// startAll starts the cloud and every selected release's lane, the lanes
// side by side (a root file system is built on first use).
func startAll(t *testing.T) {
	startOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
		defer cancel()
		dir, err := os.MkdirTemp("", "magnum-capi-cloud-")
		if err != nil {
			cloudErr = err
			return
		}
		logf := func(format string, args ...any) {
			fmt.Fprintf(os.Stderr, "[%s] %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
		}
		rels := selectedReleases()
		if cloud, cloudErr = StartCloud(ctx, CloudOptions{Dir: dir, Releases: rels, SidecarBinary: os.Getenv("MAGNUM_CAPI_BIN"), Logf: logf}); cloudErr != nil {
			return
		}
		var mu sync.Mutex
		var wg sync.WaitGroup
		for _, r := range rels {
			wg.Add(1)
			go func() {
				defer wg.Done()
				l, err := StartLane(ctx, cloud, r)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					laneErrs[r.Major] = err
					return
				}
				lanes[r.Major] = l
			}()
		}
		wg.Wait()
	})
	if cloudErr != nil {
		t.Fatalf("starting the cloud: %v", cloudErr)
	}
}

// lane is a started release's lane, or fails the test.
func lane(t *testing.T, r Release) *Lane {
	t.Helper()
	startAll(t)
	if err := laneErrs[r.Major]; err != nil {
		t.Fatalf("Magnum %d did not start: %v", r.Major, err)
	}
	l, ok := lanes[r.Major]
	if !ok {
		t.Skipf("Magnum %d not selected (MAGNUM_CAPI_RELEASES)", r.Major)
	}
	return l
}
