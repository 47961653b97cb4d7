package magnum

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestCLILifecycle is what a user does with the openstack CLI, on each
// Magnum release at once, against real magnum-api and magnum-conductor
// processes, MariaDB, RabbitMQ, Keystone (trusts included) and the
// sidecar: templates from the operator guide, a label mistake shown to the
// user, create, kubeconfig, resize (also naming the nodes to remove), node
// groups, a refused and an accepted upgrade, an update by a cloud admin of
// another project, CA rotation, delete by that admin, and nothing left
// behind in the management cluster, Keystone or Magnum's
// certificate table. Beside them the demo (demo_test.go) on a Magnum 15
// lane of its own; two lanes at a time, longest first (laneSlots).
func TestCLILifecycle(t *testing.T) {
	for _, rel := range Releases {
		t.Run(rel.Name(), func(t *testing.T) {
			inLaneSlot(t, rel.Name())
			l := lane(t, rel)
			begin := time.Now()
			lifecycle(t, l)
			t.Logf("Magnum %d lane: %s", rel.Major, time.Since(begin).Round(time.Second))
		})
	}
	t.Run("demo", func(t *testing.T) {
		inLaneSlot(t, Demo.Name())
		demo(t, lane(t, Demo))
	})
}

// step runs one part of a lifecycle, logging how long it took.
func step(t *testing.T, l *Lane, name string, fn func()) {
	t.Helper()
	begin := time.Now()
	fn()
	t.Logf("Magnum %d: %s (%s)", l.Release.Major, name, time.Since(begin).Round(100*time.Millisecond))
}

// lifecycle is the regression suite through the CLI. Magnum 15 runs all of
// it; Magnum 20 and 23 run what depends on Magnum's release, on a two-core
// machine that runs the three lanes at once: templates (driver selection by
// image property, the API's network drivers), a wrong label, create (by
// template UUID), kubeconfig (the conductor signs it), a refused upgrade
// (NotSupported keeps the status from 18), resize, upgrade, CA rotation
// (who deletes certificates), delete (trusts: Magnum deletes them on 20,
// there are none on 23) and what is left. Left out there, because the
// driver and sidecar do the same on every release: the production-template
// cluster, resize naming the nodes to remove, and on 20 node groups (on 23
// Magnum no longer removes a deleted group's row itself: the driver does).
func lifecycle(t *testing.T, l *Lane) {
	ctx := context.Background()
	full := l.Release.Host
	cli := l.CLI
	run := func(args ...string) string {
		t.Helper()
		out, err := cli.Run(ctx, nil, args...)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	show := func(name string) map[string]any {
		t.Helper()
		f, err := l.Show(ctx, "cluster", name)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	// waitAfter waits for the outcome of an action taken when the cluster
	// was before (nil: a new cluster).
	waitAfter := func(name, want string, before map[string]any) map[string]any {
		t.Helper()
		fields, seen, err := l.WaitFrom(ctx, "cluster", []string{name}, want, 10*time.Minute, before)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("Magnum %d: cluster %s: %v", l.Release.Major, name, seen)
		return fields
	}
	wait := func(name, want string) map[string]any { t.Helper(); return waitAfter(name, want, nil) }
	// act runs a command on a cluster and waits for the cluster to reach
	// want afterwards.
	act := func(name, want string, args ...string) map[string]any {
		t.Helper()
		before := show(name)
		run(args...)
		return waitAfter(name, want, before)
	}
	// createFrom is `coe cluster create` naming the template. Magnum 20
	// and 23 cannot: their API validates the master count by looking the
	// template up as a UUID (Driver.get_driver_for_cluster), and answers
	// 404 "ClusterTemplate <name up to its first '.'>"; users there give
	// the template's UUID.
	createFrom := func(name, template string, args ...string) {
		t.Helper()
		full := append([]string{"coe", "cluster", "create", name, "--cluster-template", template}, args...)
		_, err := cli.Run(ctx, nil, full...)
		if err != nil && l.Release.Major >= 20 && notFound(err) {
			t.Logf("Magnum %d: create naming template %s: %v (a Magnum defect); using its UUID", l.Release.Major, template, err)
			tmpl, err := l.Show(ctx, "cluster template", template)
			if err != nil {
				t.Fatal(err)
			}
			full[5] = tmpl["uuid"].(string)
			run(full...)
			return
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	var uuids []string
	stackIDs, uuidOf := map[string]string{}, map[string]string{}
	remember := func(name string) {
		t.Helper()
		f, err := l.Show(ctx, "cluster", name)
		if err != nil {
			t.Fatal(err)
		}
		uuids = append(uuids, f["uuid"].(string))
		uuidOf[name] = f["uuid"].(string)
		stackIDs[name], _ = f["stack_id"].(string)
	}
	// gone waits until Magnum no longer shows the cluster, then, with no
	// wait, checks that nothing of it is left in the management cluster:
	// Magnum forgets a cluster at DELETE_COMPLETE, so what is left then is
	// lost.
	gone := func(name string) {
		t.Helper()
		if f, err := l.Show(ctx, "cluster", name); err == nil && f["stack_id"] != nil {
			// Magnum saves it when the conductor's create returns, after
			// remember has looked.
			stackIDs[name], _ = f["stack_id"].(string)
		}
		wait(name, "gone")
		left, err := l.ClusterRemains(ctx, stackIDs[name], uuidOf[name])
		if err != nil {
			t.Fatal(err)
		}
		if len(left) > 0 {
			t.Errorf("Magnum %d: cluster %s gone from Magnum, but still in the management cluster: %v", l.Release.Major, name, left)
		}
	}

	step(t, l, "install check", func() {
		if !strings.Contains(l.InstallOutput, "magnum_capi") {
			t.Fatalf("magnum-driver-manage list-drivers:\n%s", l.InstallOutput)
		}
	})

	step(t, l, "keypair and templates", func() {
		key := filepath.Join(l.Dir, "demo-key.pub")
		if err := os.WriteFile(key, newPublicKey(t), 0o600); err != nil {
			t.Fatal(err)
		}
		run("keypair", "create", "--public-key", key, "demo-key")
		for _, name := range []string{"template-minimal", prodTemplateBlock(l.Release)} {
			block, err := GuideBlock(name)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := cli.Script(ctx, block, nil); err != nil {
				t.Fatal(err)
			}
		}
		if !l.Release.SupportsCiliumNetworkDriver() {
			_, err := cli.Run(ctx, nil, "coe", "cluster", "template", "create", "cilium-refused", "--coe", "kubernetes",
				"--image", ImageName("v1.33.2"), "--external-network", "public", "--network-driver", "cilium")
			if err == nil || !strings.Contains(err.Error(), "cilium") {
				t.Errorf("Magnum %d took --network-driver cilium (the guide says it refuses it): %v", l.Release.Major, err)
			}
		}
		for _, v := range []string{"v1.34.1", "v1.35.0"} {
			run("coe", "cluster", "template", "create", "k8s-"+v, "--coe", "kubernetes", "--image", ImageName(v),
				"--external-network", "public", "--dns-nameserver", "8.8.8.8", "--master-flavor", "m1.medium",
				"--flavor", "m1.large", "--network-driver", "calico", "--master-lb-enabled", "--floating-ip-enabled")
		}
		run("coe", "cluster", "template", "create", "k8s-bad-label", "--coe", "kubernetes", "--image", ImageName("v1.33.2"),
			"--external-network", "public", "--master-flavor", "m1.medium", "--flavor", "m1.large",
			"--network-driver", "calico", "--labels", "monitoring_enabled=perhaps")
		tmpl, err := l.Show(ctx, "cluster template", "k8s-v1.33.2")
		if err != nil {
			t.Fatal(err)
		}
		if tmpl["cluster_distro"] != "ubuntu" {
			t.Errorf("template cluster_distro %v: Magnum read the image's os_distro wrong", tmpl["cluster_distro"])
		}
	})

	// Clusters at once: the one this test follows, one whose label is
	// wrong, and (Magnum 15) one from the guide's production template
	// (autoscaling min/max counts reach the chart as numbers, Cilium).
	clusters := []string{"demo", "bad"}
	if full {
		clusters = append(clusters, "prod")
	}
	step(t, l, "create", func() {
		createFrom("demo", "k8s-v1.33.2", "--master-count", "1", "--node-count", "2", "--keypair", "demo-key")
		createFrom("bad", "k8s-bad-label")
		if full {
			createFrom("prod", "k8s-v1.33.2-prod", "--master-count", "1", "--node-count", "2")
		}
		for _, name := range clusters {
			remember(name)
		}
		bad := wait("bad", "CREATE_FAILED")
		reason, _ := bad["status_reason"].(string)
		if !strings.Contains(reason, "monitoring_enabled") || !strings.Contains(reason, "perhaps") {
			t.Errorf("a wrong label: the user reads %q, which does not name the label and its value", reason)
		}
		demo := wait("demo", "CREATE_COMPLETE")
		if demo["coe_version"] != "v1.33.2" || !strings.HasPrefix(demo["api_address"].(string), "https://") {
			t.Errorf("demo: coe_version %v api_address %v", demo["coe_version"], demo["api_address"])
		}
		if n := len(strs(demo["node_addresses"])); n != 2 {
			t.Errorf("demo: %d node addresses, want 2", n)
		}
		if full {
			wait("prod", "CREATE_COMPLETE")
			run("coe", "cluster", "delete", "prod")
		}
		run("coe", "cluster", "delete", "bad")
	})

	step(t, l, "cluster config", func() {
		dir := filepath.Join(l.Dir, "kubeconfig")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		run("coe", "cluster", "config", "demo", "--dir", dir, "--force")
		checkKubeconfig(t, l, filepath.Join(dir, "config"), "demo")
	})

	step(t, l, "refused upgrade", func() {
		// v1.33 -> v1.35 skips a minor version: refused before anything
		// changes, with the whole reason shown to the user.
		_, err := cli.Run(ctx, nil, "coe", "cluster", "upgrade", "demo", "k8s-v1.35.0")
		if err == nil {
			t.Fatal("an upgrade skipping a minor version was accepted")
		}
		// What the user reads: magnum-api shows the error's first sentence
		// (up to a '.'), so the shim writes its dots as U+2024, which reads
		// the same.
		shown := strings.ReplaceAll(err.(*CLIError).Output, "\u2024", ".")
		want := "upgrading Kubernetes from v1.33.2 to v1.35.0 skips a minor version; upgrade to v1.34 first (HTTP 400)"
		if !strings.Contains(shown, want) {
			t.Errorf("the refusal the user reads:\n%s\nwant it to say %q", shown, want)
		}
		demo, err := l.Show(ctx, "cluster", "demo")
		if err != nil {
			t.Fatal(err)
		}
		if l.Release.Major >= 18 {
			// Magnum >= 18 leaves the status alone on NotSupported.
			if demo["status"] != "CREATE_COMPLETE" {
				t.Errorf("after a refused upgrade the cluster is %v, want CREATE_COMPLETE", demo["status"])
			}
			return
		}
		// Magnum 15-17 set UPDATE_FAILED on any error; a resize to the
		// same size is the way back.
		if demo["status"] != "UPDATE_FAILED" {
			t.Errorf("Magnum %d after a refused upgrade: %v, want UPDATE_FAILED", l.Release.Major, demo["status"])
		}
		act("demo", "UPDATE_COMPLETE", "coe", "cluster", "resize", "demo", "2")
	})

	step(t, l, "resize", func() {
		demo := act("demo", "UPDATE_COMPLETE", "coe", "cluster", "resize", "demo", "3")
		if n := len(strs(demo["node_addresses"])); n != 3 {
			t.Errorf("after resize to 3: %d node addresses", n)
		}
		if !full {
			return
		}
		ng, err := l.Show(ctx, "nodegroup", "demo", "default-worker")
		if err != nil {
			t.Fatal(err)
		}
		addresses := strs(ng["node_addresses"])
		slices.Sort(addresses)
		remove := addresses[0]
		demo = act("demo", "UPDATE_COMPLETE", "coe", "cluster", "resize", "demo", "2", "--nodes-to-remove", remove)
		if got := strs(demo["node_addresses"]); len(got) != 2 || slices.Contains(got, remove) {
			t.Errorf("after resize to 2 removing %s: %v", remove, got)
		}
	})

	step(t, l, "node groups", func() {
		if !full && l.Release.Major < 23 {
			return
		}
		before := show("demo")
		create := []string{"coe", "nodegroup", "create", "demo", "extra", "--node-count", "1", "--flavor", "m1.large"}
		if l.Release.Major < 23 {
			// Before 23 node groups have no node_labels/node_taints
			// fields: the labels carry them (two --labels options, so
			// magnumclient splits neither on its commas).
			create = append(create, "--labels", "node_labels=tier=batch", "--labels", "node_taints=dedicated=batch:NoSchedule")
		}
		run(create...)
		if _, seen, err := l.Wait(ctx, "nodegroup", []string{"demo", "extra"}, "CREATE_COMPLETE", 10*time.Minute); err != nil {
			t.Fatal(err)
		} else {
			t.Logf("Magnum %d: node group extra: %v", l.Release.Major, seen)
		}
		waitAfter("demo", "UPDATE_COMPLETE", before)
		if l.Release.Major >= 23 {
			// Magnum 23's fields. Debian 12's magnumclient has no
			// options for them at create, but its update sends any
			// attribute as a JSON patch. The patch value must be a
			// string (JsonPatchType.value is text or int; a JSON
			// object is refused with HTTP 400), which Magnum 23
			// reads with ast.literal_eval: so a Python literal,
			// which magnumclient does not JSON-decode.
			run("coe", "nodegroup", "update", "demo", "extra", "replace", `node_labels={'tier': 'batch'}`,
				`node_taints=[{'key': 'dedicated', 'value': 'batch', 'effect': 'NoSchedule'}]`)
			if _, seen, err := l.Wait(ctx, "nodegroup", []string{"demo", "extra"}, "UPDATE_COMPLETE", 10*time.Minute); err != nil {
				t.Fatal(err)
			} else {
				t.Logf("Magnum %d: node group extra: %v", l.Release.Major, seen)
			}
		}
		checkNodeRegistration(ctx, t, l, laneStackID(t, l, show("demo")), "extra",
			"capi.stackhpc.com/node-group=extra,tier=batch", "dedicated", "batch", "NoSchedule")
		before = show("demo")
		run("coe", "nodegroup", "delete", "demo", "extra")
		if _, seen, err := l.Wait(ctx, "nodegroup", []string{"demo", "extra"}, "gone", 10*time.Minute); err != nil {
			t.Fatal(err)
		} else {
			t.Logf("Magnum %d: node group extra: %v", l.Release.Major, seen)
		}
		waitAfter("demo", "UPDATE_COMPLETE", before)
	})

	step(t, l, "upgrade", func() {
		demo := act("demo", "UPDATE_COMPLETE", "coe", "cluster", "upgrade", "demo", "k8s-v1.34.1")
		if demo["coe_version"] != "v1.34.1" {
			t.Errorf("after the upgrade coe_version is %v", demo["coe_version"])
		}
	})

	// A cloud admin of another project changes the tenant's cluster, as
	// Magnum's default policy lets it (by uuid: names are per project).
	// The driver acts in the cluster's project as the cluster's own
	// credential; nothing appears in the admin's project or of the admin.
	untouched := func(when string) {
		t.Helper()
		found, err := l.AdminFootprint(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(found) > 0 {
			t.Errorf("Magnum %d: %s, the cloud admin's project holds: %v", l.Release.Major, when, found)
		}
	}
	step(t, l, "a cloud admin of another project", func() {
		demo := show("demo")
		count := "2"
		if fmt.Sprint(demo["node_count"]) == "2" {
			count = "3"
		}
		if _, err := l.AdminCLI.Run(ctx, nil, "coe", "cluster", "update", uuidOf["demo"], "replace", "node_count="+count); err != nil {
			t.Fatal(err)
		}
		demo = waitAfter("demo", "UPDATE_COMPLETE", demo)
		if fmt.Sprint(demo["node_count"]) != count {
			t.Errorf("after the admin's update node_count is %v, want %s", demo["node_count"], count)
		}
		untouched("after its update")
	})

	step(t, l, "CA rotation", func() {
		before := run("coe", "ca", "show", "demo")
		act("demo", "UPDATE_COMPLETE", "coe", "ca", "rotate", "demo")
		if after := run("coe", "ca", "show", "demo"); after == before {
			t.Error("coe ca show is the same after coe ca rotate")
		}
		// One CA, etcd CA, front-proxy CA and client certificate: the
		// rotated-away ones are gone.
		if rows, err := l.SQL(ctx, "SELECT COUNT(*) FROM x509keypair"); err != nil || rows != "4" {
			t.Errorf("x509keypair rows after rotation: %s %v, want 4 (the cluster's current ones)", rows, err)
		}
		dir := filepath.Join(l.Dir, "kubeconfig-rotated")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		run("coe", "cluster", "config", "demo", "--dir", dir, "--force")
		checkKubeconfig(t, l, filepath.Join(dir, "config"), "demo")
	})

	step(t, l, "delete", func() {
		// By the cloud admin of another project.
		if _, err := l.AdminCLI.Run(ctx, nil, "coe", "cluster", "delete", uuidOf["demo"]); err != nil {
			t.Fatal(err)
		}
		for _, name := range clusters {
			gone(name)
		}
		assertNothingLeft(ctx, t, l, uuids)
		untouched("after its delete")
	})
}

// prodTemplateBlock is the guide's production template for the release.
func prodTemplateBlock(r Release) string {
	if r.SupportsCiliumNetworkDriver() {
		return "template-prod"
	}
	return "template-prod-magnum15"
}

// assertNothingLeft fails with whatever the lane's deleted clusters left.
// Keystone and the sidecar clean up asynchronously after DELETE_COMPLETE
// for a few seconds at most.
func assertNothingLeft(ctx context.Context, t *testing.T, l *Lane, uuids []string) {
	t.Helper()
	var left []string
	deadline := time.Now().Add(time.Minute)
	for {
		var err error
		if left, err = l.Leftovers(ctx, uuids); err != nil {
			t.Fatal(err)
		}
		if len(left) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(2 * time.Second)
	}
	if len(left) > 0 {
		t.Errorf("Magnum %d: left behind after delete: %s", l.Release.Major, strings.Join(left, "; "))
	}
}

// checkKubeconfig: the kubeconfig `coe cluster config` wrote points at the
// cluster's api_address and trusts the cluster's CA, the one in the CA
// Secret Cluster API uses.
func checkKubeconfig(t *testing.T, l *Lane, path, cluster string) {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fields, err := l.Show(context.Background(), "cluster", cluster)
	if err != nil {
		t.Fatal(err)
	}
	stackID := laneStackID(t, l, fields)
	var secret corev1.Secret
	key := client.ObjectKey{Namespace: l.Namespace(), Name: stackID + "-ca"}
	if err := l.Cloud.H.Env.Client.Get(context.Background(), key, &secret); err != nil {
		t.Fatal(err)
	}
	if len(cfg.Clusters) != 1 {
		t.Fatalf("kubeconfig has %d clusters", len(cfg.Clusters))
	}
	for _, c := range cfg.Clusters {
		if c.Server != fields["api_address"] {
			t.Errorf("kubeconfig server %s, cluster api_address %v", c.Server, fields["api_address"])
		}
		if strings.TrimSpace(string(c.CertificateAuthorityData)) != strings.TrimSpace(string(secret.Data["tls.crt"])) {
			t.Errorf("kubeconfig CA is not the cluster's CA Secret %s", key.Name)
		}
	}
}

// newPublicKey is an OpenSSH public key for `openstack keypair create`.
func newPublicKey(t *testing.T) []byte {
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return []byte("ssh-ed25519 " + base64.StdEncoding.EncodeToString(key.Marshal()) + " demo\n")
}

// TestOutages: on Magnum 15, magnum-conductor killed (SIGKILL) right after
// it handed a create to the sidecar, and the sidecar stopped while a resize
// is asked for. Runs after the lifecycles: the sidecar is every release's.
func TestOutages(t *testing.T) {
	l := lane(t, Releases[0])
	ctx := context.Background()
	run := func(args ...string) {
		t.Helper()
		if _, err := l.CLI.Run(ctx, nil, args...); err != nil {
			t.Fatal(err)
		}
	}
	run("coe", "cluster", "template", "create", "k8s-outage", "--coe", "kubernetes", "--image", ImageName("v1.33.2"),
		"--external-network", "public", "--master-flavor", "m1.medium", "--flavor", "m1.large", "--network-driver", "calico")
	run("coe", "cluster", "create", "outage", "--cluster-template", "k8s-outage", "--node-count", "2")
	var uuid string
	step(t, l, "conductor killed after create", func() {
		// The conductor has returned from the driver's create once the
		// cluster has its stack_id.
		deadline := time.Now().Add(5 * time.Minute)
		for {
			f, err := l.Show(ctx, "cluster", "outage")
			if err != nil {
				t.Fatal(err)
			}
			uuid, _ = f["uuid"].(string)
			if StackID(f) != "" || time.Now().After(deadline) {
				break
			}
			time.Sleep(time.Second)
		}
		l.StopConductor(syscall.SIGKILL)
		if err := l.StartConductor(ctx); err != nil {
			t.Fatal(err)
		}
		if _, seen, err := l.WaitCluster(ctx, "outage", "CREATE_COMPLETE"); err != nil {
			t.Fatal(err)
		} else {
			t.Logf("after the conductor's restart: %v", seen)
		}
	})
	step(t, l, "sidecar down during a resize", func() {
		l.Cloud.Sidecar.Halt()
		run("coe", "cluster", "resize", "outage", "3")
		failed, seen, err := l.WaitCluster(ctx, "outage", "UPDATE_FAILED")
		if startErr := l.Cloud.Sidecar.Start(ctx); startErr != nil {
			t.Fatal(startErr)
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("with the sidecar down: %v", seen)
		reason, _ := failed["status_reason"].(string)
		if !strings.Contains(reason, "magnum-capi sidecar is unavailable") || strings.Contains(reason, "/run/magnum-capi") {
			t.Errorf("the user reads %q: want that the sidecar is unavailable, without its address", reason)
		}
		// The operator's log has the address (the guide's troubleshooting).
		if log, err := os.ReadFile(l.Log("magnum-conductor.log")); err != nil || !strings.Contains(string(log), "magnum-capi sidecar at unix:///run/magnum-capi/magnum-capi.sock: ResizeCluster ended") {
			t.Errorf("magnum-conductor.log does not name the sidecar's address and the call (%v)", err)
		}
		// The way back the operator guide gives: the same request again.
		run("coe", "cluster", "resize", "outage", "3")
		done, seen, err := l.WaitFrom(ctx, "cluster", []string{"outage"}, "UPDATE_COMPLETE", 10*time.Minute, failed)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("resize again with the sidecar back: %v", seen)
		if n := len(strs(done["node_addresses"])); n != 3 {
			t.Errorf("after the resize: %d nodes, want 3", n)
		}
	})
	step(t, l, "delete", func() {
		run("coe", "cluster", "delete", "outage")
		if _, _, err := l.WaitCluster(ctx, "outage", "gone"); err != nil {
			t.Fatal(err)
		}
		assertNothingLeft(ctx, t, l, []string{uuid})
	})
}

// TestNoSurprises runs last: every request Magnum's services and the CLI
// made to the OpenStack doubles had an answer (none fell through to "no
// such route"), and the sidecar's log is JSON lines only.
func TestNoSurprises(t *testing.T) {
	startAll(t)
	if cloud == nil {
		t.Skip("no cloud")
	}
	for _, r := range cloud.H.OpenStack.Unrouted() {
		t.Errorf("the OpenStack doubles have no answer for %s %s (%s)", r.Method, r.Path, r.Service)
	}
	bad, err := cloud.Sidecar.NonJSONLines()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range bad {
		t.Errorf("the sidecar's log has a line that is not JSON: %s", line)
	}
}
