package testbed

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// orphanChildEnv makes the test binary, re-run by TestKilledTestLeavesNoStack,
// start a test bed, print its directory and wait to be killed.
const orphanChildEnv = "MAGNUM_CAPI_TESTBED_ORPHAN_CHILD"

func runOrphanChild() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	e, err := Start(ctx, Options{})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("dir:", e.Dir)
	select {} // killed by the parent, as go test's -timeout would end it
}

// TestKilledTestLeavesNoStack kills a process running a test bed with
// SIGKILL — no deferred Stop runs, as when go test's -timeout ends a binary —
// and checks its kube-apiserver and etcd go with it instead of running on,
// reparented to init.
func TestKilledTestLeavesNoStack(t *testing.T) {
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), orphanChildEnv+"=1")
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "dir: ") {
		_ = child.Process.Kill()
		t.Fatalf("child test bed did not start: %q %v", line, err)
	}
	dir := strings.TrimSpace(strings.TrimPrefix(line, "dir: "))
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	marker := dir + string(filepath.Separator)
	if pids := processesNaming(marker); len(pids) < 2 {
		t.Fatalf("want kube-apiserver and etcd running under %s, found pids %v", dir, pids)
	}

	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	deadline := time.Now().Add(30 * time.Second)
	for {
		pids := processesNaming(marker)
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, pid := range pids {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			t.Fatalf("processes of the killed test's test bed still running 30s later: %v", pids)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// processesNaming lists the processes whose command line contains s.
func processesNaming(s string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, ent := range entries {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", ent.Name(), "cmdline"))
		if err == nil && bytes.Contains(cmdline, []byte(s)) {
			pids = append(pids, pid)
		}
	}
	return pids
}
