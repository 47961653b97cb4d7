// Command testbed runs the test stack (test/harness) until interrupted: a
// real kube-apiserver and etcd with the Cluster API CRDs and conversion, the
// real Cluster API controllers (test/capicontrollers), a chart repository, a
// real Keystone and OpenStack API doubles. `make testbed` runs it for people; the Python tests and
// `make demo` run it as a subprocess and read the JSON it writes.
//
//	testbed [-step 200ms] [-info FILE] [-socket PATH -sidecar-config FILE] [-sidecar BIN]
//
// With -sidecar, it also runs the magnum-capi binary BIN as the stack's
// sidecar (harness.StartSidecar, as every Go test does) and serves an HTTP
// API that starts and stops more (sidecars.go); the info JSON then has the
// sidecar's address and the API's URL.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/magnum-capi/magnum-capi/test/harness"
)

func main() {
	step := flag.Duration("step", 200*time.Millisecond, "OpenStack's pace in the test bed's OpenStack provider: how long a network, a load balancer, a server build take")
	infoFile := flag.String("info", "", "write the stack's connection details here as JSON (default: print them)")
	socket := flag.String("socket", "", "the unix socket a sidecar should listen on (for -sidecar-config)")
	sidecarConfig := flag.String("sidecar-config", "", "write a magnum-capi configuration for this stack here")
	dir := flag.String("dir", "", "keep the stack's files here (default: a temporary directory)")
	sidecarBin := flag.String("sidecar", "", "run this magnum-capi binary as the stack's sidecar, and serve the sidecars API")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *step, *infoFile, *socket, *sidecarConfig, *dir, *sidecarBin); err != nil {
		fmt.Fprintln(os.Stderr, "testbed:", err)
		os.Exit(1)
	}
}

// stackInfo is what the info JSON holds: the stack's Info and, with
// -sidecar, the sidecar and the sidecars API.
type stackInfo struct {
	harness.Info
	Sidecar     *sidecarInfo `json:"sidecar,omitempty"`
	SidecarsURL string       `json:"sidecars_url,omitempty"`
}

func run(ctx context.Context, step time.Duration, infoFile, socket, sidecarConfig, dir, sidecarBin string) error {
	start := time.Now()
	startCtx, cancel := context.WithTimeout(ctx, 20*time.Minute)
	// Magnum 15's conductor creates a trustee and a trust for every
	// cluster: the Python tests and the demo run it against this Keystone.
	h, err := harness.Start(startCtx, harness.Options{Step: step, Dir: dir, TrusteeDomain: true})
	cancel()
	if err != nil {
		return err
	}
	defer func() {
		if err := h.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "testbed: stopping:", err)
		}
	}()
	if sidecarConfig != "" {
		if socket == "" {
			socket = h.Info.Dir + "/magnum-capi.sock"
		}
		if err := h.WriteSidecarConfig(sidecarConfig, socket); err != nil {
			return err
		}
	}
	si := stackInfo{Info: h.Info}
	if sidecarBin != "" {
		s := &sidecars{h: h, binary: sidecarBin, running: map[string]*harness.Sidecar{}}
		defer s.stopAll()
		first, err := s.start(ctx, "sidecar", nil)
		if err != nil {
			return err
		}
		si.Sidecar = &first
		if si.SidecarsURL, err = serveSidecars(ctx, s); err != nil {
			return err
		}
	}
	info, err := json.MarshalIndent(si, "", "  ")
	if err != nil {
		return err
	}
	if infoFile != "" {
		// Written last and renamed into place: a reader polling for the file
		// sees it only once everything is up.
		if err := os.WriteFile(infoFile+".tmp", info, 0o600); err != nil {
			return err
		}
		if err := os.Rename(infoFile+".tmp", infoFile); err != nil {
			return err
		}
	} else {
		fmt.Println(string(info))
	}
	fmt.Fprintf(os.Stderr, "testbed: up in %s\n  kubectl --kubeconfig %s get clusters -A\n  Ctrl-C to stop\n",
		time.Since(start).Round(100*time.Millisecond), h.Info.Kubeconfig)
	<-ctx.Done()
	return nil
}
