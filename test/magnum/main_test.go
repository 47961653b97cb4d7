package magnum

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The cloud and its lanes start once per test binary, shared by the tests.
var (
	cloud     *Cloud
	lanes     = map[string]*Lane{}
	laneErrs  = map[string]error{}
	laneOnce  = map[string]*sync.Once{}
	lanesMu   sync.Mutex
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

// selectedLanes are the selected releases' lanes and, with Magnum 15, the
// demo's (TestCLILifecycle/demo).
func selectedLanes() []Release {
	out := selectedReleases()
	if slices.ContainsFunc(out, func(r Release) bool { return r.Major == Demo.Major }) {
		out = append(out, Demo)
	}
	return out
}

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	for _, l := range lanes {
		if l != nil {
			l.Stop()
		}
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

// startAll starts the cloud once.
func startAll(t *testing.T) {
	startOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
		defer cancel()
		dir, err := os.MkdirTemp("", "magnum-capi-cloud-")
		if err != nil {
			cloudErr = err
			return
		}
		cloud, cloudErr = StartCloud(ctx, CloudOptions{Dir: dir, Releases: selectedLanes(),
			SidecarBinary: os.Getenv("MAGNUM_CAPI_BIN"), Logf: logf})
	})
	if cloudErr != nil {
		t.Fatalf("starting the cloud: %v", cloudErr)
	}
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "[%s] %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

// lane is a release's lane, started on first use (a root file system is
// built first when it is not cached), or fails the test.
func lane(t *testing.T, r Release) *Lane {
	t.Helper()
	if !slices.Contains(selectedLanes(), r) {
		t.Skipf("Magnum %d not selected (MAGNUM_CAPI_RELEASES)", r.Major)
	}
	startAll(t)
	lanesMu.Lock()
	once, ok := laneOnce[r.Name()]
	if !ok {
		once = &sync.Once{}
		laneOnce[r.Name()] = once
	}
	lanesMu.Unlock()
	once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
		defer cancel()
		l, err := StartLane(ctx, cloud, r)
		lanesMu.Lock()
		defer lanesMu.Unlock()
		lanes[r.Name()], laneErrs[r.Name()] = l, err
	})
	lanesMu.Lock()
	defer lanesMu.Unlock()
	if err := laneErrs[r.Name()]; err != nil {
		t.Fatalf("Magnum %d did not start: %v", r.Major, err)
	}
	return lanes[r.Name()]
}
