// Command stackhpc-install installs a cluster as the StackHPC magnum-capi-helm driver
// does (package stackhpc), for tests outside Go: the Python functional tests
// build it (go build ./test/cmd/stackhpc-install) and run
//
//	stackhpc-install -kubeconfig FILE [-wait 3m] < cluster.json > installed.json
//
// cluster.json is a stackhpc.Cluster; installed.json a stackhpc.Installed.
// With -wait it returns once the Cluster API controllers have brought the cluster up.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/magnum-capi/magnum-capi/test/stackhpc"
)

func main() {
	// Its own flag set: controller-runtime registers -kubeconfig globally.
	fs := flag.NewFlagSet("stackhpc-install", flag.ExitOnError)
	kubeconfig := fs.String("kubeconfig", "", "the management cluster's kubeconfig")
	wait := fs.Duration("wait", 0, "wait this long for the cluster to come up (0: do not wait)")
	_ = fs.Parse(os.Args[1:])
	if err := run(*kubeconfig, *wait); err != nil {
		fmt.Fprintln(os.Stderr, "stackhpc install:", err)
		os.Exit(1)
	}
}

func run(kubeconfig string, wait time.Duration) error {
	var c stackhpc.Cluster
	if err := json.NewDecoder(os.Stdin).Decode(&c); err != nil {
		return fmt.Errorf("reading the cluster from stdin: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute+wait)
	defer cancel()
	out, err := stackhpc.Install(ctx, kubeconfig, c)
	if err != nil {
		return err
	}
	if wait > 0 {
		machines := c.MasterCount
		for _, ng := range c.NodeGroups {
			machines += ng.Count
		}
		if err := stackhpc.WaitReady(ctx, kubeconfig, out.Namespace, out.StackID, machines); err != nil {
			return err
		}
	}
	return json.NewEncoder(os.Stdout).Encode(out)
}
