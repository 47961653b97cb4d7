// Command magnum-demo is the first half of `make demo`: Magnum as a cloud
// runs it (make test runs the same demo, magnum.RunDemo, as
// TestCLILifecycle/demo). It starts the test cloud (management cluster,
// Keystone, MariaDB, RabbitMQ, the sidecar as deploy/systemd runs it) and
// Debian's Magnum 15 magnum-api and magnum-conductor with the shim installed
// as the operator guide says, then drives one cluster through its life with
// the openstack CLI, printing each command and its own output.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/magnum-capi/magnum-capi/test/magnum"
)

var start = time.Now()

func say(format string, args ...any) {
	fmt.Printf("[%6.1fs] %s\n", time.Since(start).Seconds(), fmt.Sprintf(format, args...))
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx); err != nil {
		say("demo: FAILED: %v", err)
		os.Exit(1)
	}
	say("demo: OK")
}

func run(ctx context.Context) error {
	dir, err := os.MkdirTemp("", "magnum-capi-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	rel := magnum.Demo
	say("starting the cloud: kube-apiserver + etcd with Cluster API, chart repository, Keystone, MariaDB, RabbitMQ, the sidecar")
	cloud, err := magnum.StartCloud(ctx, magnum.CloudOptions{Dir: dir, Releases: []magnum.Release{rel},
		SidecarBinary: os.Getenv("MAGNUM_CAPI_BIN"), Logf: func(f string, a ...any) { say(f, a...) }})
	if err != nil {
		return err
	}
	defer cloud.Stop()
	l, err := magnum.StartLane(ctx, cloud, rel)
	if err != nil {
		return err
	}
	defer l.Stop()
	say("Magnum %d (Debian %s) serving; the shim as `magnum-driver-manage list-drivers --details` shows it:", rel.Major, rel.Suite)
	fmt.Print(l.InstallOutput)
	say("the rest is a user with the openstack CLI (project %s, region %s):", l.Project.Name, rel.Region())
	return magnum.RunDemo(ctx, l, dir, os.Stdout, say)
}
