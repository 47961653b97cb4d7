package deploy

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/strvals"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/magnum-capi/magnum-capi/test/harness"
)

// TestHelmChartRuns renders the chart for a sidecar beside magnum-conductor
// (ci/sidecar-values.yaml, with the site's chart repository and metrics
// port) and runs the sidecar exactly as the rendered container says: its
// command, args and env, as its securityContext's user, with every volume
// mount laid out in its root as the kubelet would (the ConfigMap's keys and
// the Secrets' items as files, emptyDirs as empty directories), against the
// test bed. The readiness probe's /healthz answers, magnum-capi health
// passes, and the socket in the shared emptyDir is reachable by
// magnum-conductor's uid.
//
// No kubelet runs here, so the test does not show: the image (the binary
// make build made is placed at the command's path; TestImage builds the
// image), readOnlyRootFilesystem, readOnly mounts and dropped capabilities
// as the runtime enforces them, the pod's network namespace (the probes
// reach 127.0.0.1 here, the pod IP there), the kubelet running the probes,
// and the in-cluster kubeconfig (ci/deployment-values.yaml; its objects are
// dry-run by TestHelmChart).
func TestHelmChartRuns(t *testing.T) {
	t.Parallel()
	needRoot(t)
	b := theBed(t)
	port := freePort(t)
	vals := readValues(t, filepath.Join(helmChart, "ci", "sidecar-values.yaml"))
	vals["metrics"] = map[string]any{"port": port}
	setPath(vals, []string{"config", "chart"}, map[string]any{"repository": b.charts.URL(), "name": harness.ChartName, "version": harness.ChartVersion, "cacheDir": "/var/cache/magnum-capi/charts"})
	objs := render(t, vals)
	snippet := configMapData(t, objs, "magnum-capi-conductor-sidecar")
	var containers []corev1.Container
	var volumes []corev1.Volume
	if err := yaml.Unmarshal([]byte(snippet["containers.yaml"]), &containers); err != nil || len(containers) != 1 {
		t.Fatalf("containers.yaml: %v (%d containers)\n%s", err, len(containers), snippet["containers.yaml"])
	}
	if err := yaml.Unmarshal([]byte(snippet["volumes.yaml"]), &volumes); err != nil {
		t.Fatalf("volumes.yaml: %v", err)
	}
	c := containers[0]
	secrets := map[string]map[string][]byte{
		"magnum-capi-kubeconfig": {"kubeconfig": b.kubeconfig(t)},
		"magnum-capi-clouds":     {"clouds.yaml": []byte("clouds:\n  magnum:\n    auth_type: v3applicationcredential\n    auth:\n      auth_url: http://127.0.0.1:1/v3\n      application_credential_id: test\n      application_credential_secret: test\n")},
	}
	j := podJail(t, c, volumes, objs, secrets)
	var env []string
	for _, e := range c.Env {
		env = append(env, e.Name+"="+e.Value)
	}
	j.env = env
	p := j.start(t, append(slices.Clone(c.Command), c.Args...)...)

	probe := c.ReadinessProbe.HTTPGet
	url := fmt.Sprintf("http://127.0.0.1:%d%s", containerPort(t, c, probe.Port.String()), probe.Path)
	waitFor(t, 60*time.Second, func() string { return url + " never answered 200; sidecar log:\n" + p.output() }, func() bool {
		if p.exited() {
			t.Fatalf("the sidecar exited: %v\n%s", p.err, p.output())
		}
		resp, err := http.Get(url)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if out, err := j.run(ctx, c.Command[0], "health", "--wait", "50s"); err != nil {
		t.Errorf("magnum-capi health in the container: %v\n%s", err, out)
	}
	socket := filepath.Join(j.root, "run", "magnum-capi", "magnum-capi.sock")
	if out, err := asUser(ctx, j.uid, j.gid, sidecarBinary(t), "health", "--address", "unix://"+socket); err != nil {
		t.Errorf("magnum-conductor's uid %d cannot reach the socket in the shared emptyDir: %v\n%s", j.uid, err, out)
	}
	if got := p.uids(t); !slices.Equal(got, []int{j.uid, j.uid, j.uid, j.uid}) {
		t.Errorf("the sidecar runs as uids %v, want runAsUser %d", got, j.uid)
	}
}

// podJail lays out the container's root as the kubelet would: the binary at
// its command's path, each volume at its mount path, and returns the jail
// of its securityContext's user.
func podJail(t *testing.T, c corev1.Container, volumes []corev1.Volume, objs []*unstructured.Unstructured, secrets map[string]map[string][]byte) jail {
	t.Helper()
	sc := c.SecurityContext
	if sc == nil || sc.RunAsUser == nil || sc.RunAsGroup == nil {
		t.Fatal("the container sets no runAsUser and runAsGroup")
	}
	root := reachableDir(t)
	for _, d := range []string{"etc", "run", "var/cache", "usr/local/bin"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(root, "tmp"), 0o1777); err != nil {
		t.Fatal(err)
	}
	bin, err := os.ReadFile(sidecarBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	placeFile(t, root, c.Command[0], bin, 0, 0, 0o755)
	for _, m := range c.VolumeMounts {
		i := slices.IndexFunc(volumes, func(v corev1.Volume) bool { return v.Name == m.Name })
		if i < 0 {
			t.Fatalf("volumeMount %s: no such volume", m.Name)
		}
		v := volumes[i]
		switch {
		case v.ConfigMap != nil:
			for key, data := range configMapData(t, objs, v.ConfigMap.Name) {
				placeFile(t, root, filepath.Join(m.MountPath, key), []byte(data), 0, 0, 0o644)
			}
		case v.Secret != nil:
			data, ok := secrets[v.Secret.SecretName]
			if !ok {
				t.Fatalf("volume %s: the test has no Secret %s", v.Name, v.Secret.SecretName)
			}
			for key, raw := range data {
				path := key
				for _, item := range v.Secret.Items {
					if item.Key == key {
						path = item.Path
					}
				}
				placeFile(t, root, filepath.Join(m.MountPath, path), raw, 0, 0, 0o644)
			}
		case v.EmptyDir != nil:
			dir := filepath.Join(root, m.MountPath)
			if err := os.MkdirAll(dir, 0o777); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dir, 0o777); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("volume %s: a kind the test does not lay out", v.Name)
		}
	}
	return jail{root: root, uid: int(*sc.RunAsUser), gid: int(*sc.RunAsGroup), noNewPrivs: sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation}
}

// containerPort is the number of the container's port named name (or name
// itself when it is a number).
func containerPort(t *testing.T, c corev1.Container, name string) int {
	t.Helper()
	for _, p := range c.Ports {
		if p.Name == name || fmt.Sprint(p.ContainerPort) == name {
			return int(p.ContainerPort)
		}
	}
	t.Fatalf("the container has no port %s", name)
	return 0
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestHelmGuideRecipe: the operator guide's helm-sidecar recipe installs
// this chart with the values file and --set values it names, the Secrets
// it creates are the ones the rendered volumes take, and the ConfigMap it
// reads is rendered.
func TestHelmGuideRecipe(t *testing.T) {
	t.Parallel()
	block := strings.ReplaceAll(guideBlock(t, "helm-sidecar"), "\\\n", " ")
	var created []string
	var objs []*unstructured.Unstructured
	var namespace string
	for _, line := range strings.Split(block, "\n") {
		w := strings.Fields(line)
		switch {
		case len(w) > 6 && w[0] == "kubectl" && w[3] == "create" && w[4] == "secret":
			created = append(created, w[6])
		case len(w) > 4 && w[0] == "helm" && w[1] == "upgrade" && w[2] == "--install":
			if w[4] != "deploy/"+helmChart {
				t.Fatalf("the recipe installs %s, not deploy/%s", w[4], helmChart)
			}
			namespace = flagValue(w, "-n")
			vals := readValues(t, strings.TrimPrefix(flagValue(w, "-f"), "deploy/"))
			for i, word := range w {
				if word == "--set" && i+1 < len(w) {
					if err := strvals.ParseInto(w[i+1], vals); err != nil {
						t.Fatal(err)
					}
				}
			}
			objs = render(t, vals)
		case len(w) > 4 && w[0] == "kubectl" && w[3] == "get" && w[4] == "configmap":
			configMapData(t, objs, w[5])
		}
	}
	if objs == nil || namespace == "" {
		t.Fatalf("the helm-sidecar recipe installs no chart into a namespace:\n%s", block)
	}
	var volumes []corev1.Volume
	if err := yaml.Unmarshal([]byte(configMapData(t, objs, "magnum-capi-conductor-sidecar")["volumes.yaml"]), &volumes); err != nil {
		t.Fatal(err)
	}
	var wanted []string
	for _, v := range volumes {
		if v.Secret != nil {
			wanted = append(wanted, v.Secret.SecretName)
		}
	}
	if !slices.Equal(sorted(created), sorted(wanted)) {
		t.Errorf("the recipe creates Secrets %v; the rendered volumes take %v", created, wanted)
	}
}

func flagValue(words []string, flag string) string {
	if i := slices.Index(words, flag); i >= 0 && i+1 < len(words) {
		return words[i+1]
	}
	return ""
}

// TestHelmChartDeploymentRuns runs the sidecar as the chart's own
// Deployment's pod template says (ci/deployment-values.yaml with the
// management cluster's kubeconfig from a Secret instead of the in-cluster
// one, which needs a pod in the cluster): magnum-conductor's side reaches
// it over TCP with a client certificate, and not without one.
func TestHelmChartDeploymentRuns(t *testing.T) {
	t.Parallel()
	needRoot(t)
	b := theBed(t)
	vals := readValues(t, filepath.Join(helmChart, "ci", "deployment-values.yaml"))
	grpcPort, metricsPort := freePort(t), freePort(t)
	vals["managementCluster"] = map[string]any{"inCluster": false}
	vals["rbac"] = map[string]any{"create": false}
	vals["deployment"].(map[string]any)["port"] = grpcPort
	vals["metrics"] = map[string]any{"port": metricsPort}
	setPath(vals, []string{"config", "chart"}, map[string]any{"repository": b.charts.URL(), "name": harness.ChartName, "version": harness.ChartVersion, "cacheDir": "/var/cache/magnum-capi/charts"})
	objs := render(t, vals)
	var pod corev1.PodTemplateSpec
	for _, o := range objs {
		if o.GetKind() == "Deployment" {
			tmpl, _, _ := unstructured.NestedMap(o.Object, "spec", "template")
			raw, _ := yaml.Marshal(tmpl)
			if err := yaml.Unmarshal(raw, &pod); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(pod.Spec.Containers) != 1 {
		t.Fatalf("the Deployment's pod has %d containers", len(pod.Spec.Containers))
	}
	tlsFiles := issueTLS(t)
	c := pod.Spec.Containers[0]
	j := podJail(t, c, pod.Spec.Volumes, objs, map[string]map[string][]byte{
		"magnum-capi-kubeconfig": {"kubeconfig": b.kubeconfig(t)},
		"magnum-capi-tls":        {"tls.crt": tlsFiles["tls.crt"], "tls.key": tlsFiles["tls.key"], "ca.crt": tlsFiles["ca.crt"]},
	})
	for _, e := range c.Env {
		j.env = append(j.env, e.Name+"="+e.Value)
	}
	p := j.start(t, append(slices.Clone(c.Command), c.Args...)...)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir := t.TempDir()
	for name, data := range tlsFiles {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	address := fmt.Sprintf("127.0.0.1:%d", grpcPort)
	health := []string{sidecarBinary(t), "health", "--address", address, "--tls-ca-file", filepath.Join(dir, "ca.crt")}
	out, err := asUser(ctx, 0, 0, append(health, "--wait", "50s", "--tls-cert-file", filepath.Join(dir, "client.crt"), "--tls-key-file", filepath.Join(dir, "client.key"))...)
	if err != nil {
		t.Fatalf("magnum-capi health over TCP with the client certificate: %v\n%s\nsidecar log:\n%s", err, out, p.output())
	}
	if out, err := asUser(ctx, 0, 0, append(health, "--timeout", "2s", "--tls-cert-file", filepath.Join(dir, "tls.crt"), "--tls-key-file", filepath.Join(dir, "tls.key"))...); err == nil {
		t.Errorf("a certificate for serving only (not client auth) was accepted as a client's:\n%s", out)
	}
}

// issueTLS makes a CA, the sidecar's serving certificate for 127.0.0.1
// (tls.crt, tls.key, ca.crt, as the chart's Secret holds them) and a
// client certificate (client.crt, client.key), with openssl.
func issueTLS(t *testing.T) map[string][]byte {
	t.Helper()
	dir := t.TempDir()
	script := `set -e
key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }
key ca.key; openssl req -x509 -new -key ca.key -subj /CN=magnum-capi-test-ca -days 1 -out ca.crt
key tls.key; openssl req -new -key tls.key -subj /CN=magnum-capi -out tls.csr
printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' > tls.ext
openssl x509 -req -in tls.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 1 -extfile tls.ext -out tls.crt 2>/dev/null
key client.key; openssl req -new -key client.key -subj /CN=magnum-conductor -out client.csr
printf 'extendedKeyUsage=clientAuth\n' > client.ext
openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 1 -extfile client.ext -out client.crt 2>/dev/null
`
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("openssl: %v\n%s", err, out)
	}
	files := map[string][]byte{}
	for _, name := range []string{"ca.crt", "tls.crt", "tls.key", "client.crt", "client.key"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = data
	}
	return files
}
