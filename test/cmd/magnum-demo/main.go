// Command magnum-demo is the first half of `make demo`: Magnum as a cloud
// runs it. It starts the test cloud (management cluster, Keystone, MariaDB,
// RabbitMQ, the sidecar as deploy/systemd runs it) and Debian's Magnum 15
// magnum-api and magnum-conductor with the shim installed as the operator
// guide says, then drives one cluster through its life with the openstack
// CLI, printing each command and its own output.
package main

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/crypto/ssh"

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
	rel := magnum.Releases[0]
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

	show := func(args ...string) error {
		l.CLI.Echo = os.Stdout
		defer func() { l.CLI.Echo = nil }()
		_, err := l.CLI.Run(ctx, nil, args...)
		return err
	}
	// follow prints each status `coe cluster show` gives as it changes,
	// after an action taken when the cluster was before.
	l.Watch = func(t magnum.Transition) { say("  %s", t) }
	follow := func(name, want string, before map[string]any) error {
		_, _, err := l.WaitFrom(ctx, "cluster", []string{name}, want, 10*time.Minute, before)
		return err
	}
	key := filepath.Join(dir, "demo-key.pub")
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return err
	}
	sshPub, err := ssh.NewPublicKey(pub)
	if err != nil {
		return err
	}
	if err := os.WriteFile(key, ssh.MarshalAuthorizedKey(sshPub), 0o600); err != nil {
		return err
	}
	template, err := magnum.GuideBlock("template-minimal")
	if err != nil {
		return err
	}
	l.CLI.Echo = os.Stdout
	if _, err := l.CLI.Script(ctx, template, nil); err != nil {
		return err
	}
	l.CLI.Echo = nil
	for _, step := range [][]string{
		{"keypair", "create", "--public-key", key, "demo-key"},
		{"coe", "cluster", "create", "demo", "--cluster-template", "k8s-v1.33.2", "--master-count", "1", "--node-count", "2", "--keypair", "demo-key"},
	} {
		if err := show(step...); err != nil {
			return err
		}
	}
	say("coe cluster show demo, until CREATE_COMPLETE (Magnum's periodic job asks the sidecar every 10 s):")
	if err := follow("demo", "CREATE_COMPLETE", nil); err != nil {
		return err
	}
	if err := show("coe", "cluster", "show", "demo"); err != nil {
		return err
	}
	if err := show("coe", "nodegroup", "list", "demo"); err != nil {
		return err
	}
	kube := filepath.Join(dir, "kube")
	if err := os.MkdirAll(kube, 0o700); err != nil {
		return err
	}
	if err := show("coe", "cluster", "config", "demo", "--dir", kube); err != nil {
		return err
	}
	for _, action := range []struct {
		args []string
		want string
	}{
		{[]string{"coe", "cluster", "resize", "demo", "3"}, "UPDATE_COMPLETE"},
		{[]string{"coe", "cluster", "delete", "demo"}, "gone"},
	} {
		before, err := l.Show(ctx, "cluster", "demo")
		if err != nil {
			return err
		}
		if err := show(action.args...); err != nil {
			return err
		}
		if err := follow("demo", action.want, before); err != nil {
			return err
		}
	}
	show("coe", "cluster", "list")
	left, err := l.Leftovers(ctx, nil)
	if err != nil {
		return err
	}
	if len(left) > 0 {
		return fmt.Errorf("left behind: %v", left)
	}
	say("nothing left: no Cluster API objects or Secrets, application credentials, trusts, or certificates")
	return nil
}
