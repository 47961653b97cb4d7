package magnum

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/crypto/ssh"
)

// RunDemo is the first half of `make demo` (test/cmd/magnum-demo) and
// make test's TestCLILifecycle/demo: on a started lane, a user with the
// openstack CLI takes one cluster through its life (the guide's minimal
// template, a keypair, create, show until CREATE_COMPLETE, node groups,
// config, resize, delete), each command and its own output written to echo,
// each status Magnum shows to say as it changes; then nothing may be left
// of it. dir holds the demo's files (key, kubeconfig).
func RunDemo(ctx context.Context, l *Lane, dir string, echo io.Writer, say func(string, ...any)) error {
	show := func(args ...string) error {
		l.CLI.Echo = echo
		defer func() { l.CLI.Echo = nil }()
		_, err := l.CLI.Run(ctx, nil, args...)
		return err
	}
	l.Watch = func(t Transition) { say("  %s", t) }
	defer func() { l.Watch = nil }()
	// follow prints each status `coe cluster show` gives as it changes,
	// after an action taken when the cluster was before.
	follow := func(name, want string, before map[string]any) error {
		_, _, err := l.WaitFrom(ctx, "cluster", []string{name}, want, 10*time.Minute, before)
		return err
	}
	key, err := demoKey(dir)
	if err != nil {
		return err
	}
	template, err := GuideBlock("template-minimal")
	if err != nil {
		return err
	}
	l.CLI.Echo = echo
	_, err = l.CLI.Script(ctx, template, nil)
	l.CLI.Echo = nil
	if err != nil {
		return err
	}
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
	fields, err := l.Show(ctx, "cluster", "demo")
	if err != nil {
		return err
	}
	stackID, _ := fields["stack_id"].(string)
	uuid, _ := fields["uuid"].(string)
	kube := filepath.Join(dir, "kube")
	if err := os.MkdirAll(kube, 0o700); err != nil {
		return err
	}
	for _, args := range [][]string{
		{"coe", "cluster", "show", "demo"}, {"coe", "nodegroup", "list", "demo"}, {"coe", "cluster", "config", "demo", "--dir", kube},
	} {
		if err := show(args...); err != nil {
			return err
		}
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
	return demoNothingLeft(ctx, l, stackID, uuid, show, say)
}

// demoNothingLeft checks, right when Magnum stopped showing the cluster
// (it forgets it at DELETE_COMPLETE), that nothing of it is left in the
// management cluster, then that nothing of the lane's is left anywhere.
func demoNothingLeft(ctx context.Context, l *Lane, stackID, uuid string, show func(...string) error, say func(string, ...any)) error {
	remains, err := l.ClusterRemains(ctx, stackID, uuid)
	if err != nil {
		return err
	}
	if len(remains) > 0 {
		return fmt.Errorf("at DELETE_COMPLETE, still in the management cluster: %v", remains)
	}
	if err := show("coe", "cluster", "list"); err != nil {
		return err
	}
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

// demoKey writes a fresh SSH public key for the demo's keypair.
func demoKey(dir string) (string, error) {
	key := filepath.Join(dir, "demo-key.pub")
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return "", err
	}
	sshPub, err := ssh.NewPublicKey(pub)
	if err != nil {
		return "", err
	}
	return key, os.WriteFile(key, ssh.MarshalAuthorizedKey(sshPub), 0o600)
}
