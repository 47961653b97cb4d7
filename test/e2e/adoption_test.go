package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	gproto "google.golang.org/protobuf/proto"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/magnum-capi/magnum-capi/helmvalues"
	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
	"github.com/magnum-capi/magnum-capi/test/stackhpc"
	"github.com/magnum-capi/magnum-capi/test/testchart"
)

// TestAdoptStackHPCCluster: a cluster the StackHPC magnum-capi-helm driver
// created (its names, Secrets, application credential and values, installed
// with the Helm SDK as another field manager) and brought up by the
// test bed's Cluster API controllers is switched to this driver: its status reads correctly, the
// preview lists exactly what each change will do, a resize changes only the
// MachineDeployment's replicas, a new node group adds only its own objects,
// and a delete cleans up what the StackHPC driver made.
func TestAdoptStackHPCCluster(t *testing.T) {
	t.Parallel() // its own cluster; with the other parallel tests, after the sequential ones
	// The Magnum records, as the StackHPC driver left them (its template,
	// since pointed at this driver; Magnum 15 has no per-cluster driver).
	c := newCluster(t, "StackHPC made this cluster long ago", "v1.33.2", 2)
	ca := c.certs
	pair := func(k *pb.KeyPair) stackhpc.KeyPair {
		return stackhpc.KeyPair{Certificate: k.GetCertificate(), PrivateKey: k.GetPrivateKey()}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	inst, err := stackhpc.Install(ctx, stack.Info.Kubeconfig, stackhpc.Cluster{
		Name: c.spec.Cluster.Name, UUID: c.spec.Cluster.Uuid, ProjectID: c.spec.Cluster.ProjectId, UserID: c.spec.Cluster.UserId,
		KubeVersion: "v1.33.2", ImageID: c.spec.ClusterTemplate.ImageId, ExternalNetworkID: c.spec.ClusterTemplate.ExternalNetworkId,
		DNSNameserver: c.spec.ClusterTemplate.DnsNameserver, MasterFlavor: "m1.medium", MasterCount: 1,
		NodeGroups:  []stackhpc.NodeGroup{{Name: "default-worker", Flavor: "m1.medium", Count: 2}},
		VolumeTypes: []string{"standard", "fast-ssd"}, NetworkDriver: "calico",
		AuthURL: stack.Info.AuthURL, Token: c.ctx.AuthToken,
		CAs: stackhpc.CAs{CA: pair(ca.Ca), EtcdCA: pair(ca.EtcdCa), FrontProxyCA: pair(ca.FrontProxyCa), ServiceAccount: pair(ca.ServiceAccount)},
	})
	if err != nil {
		t.Fatalf("installing as the StackHPC driver does: %v", err)
	}
	stackID, ns := inst.StackID, inst.Namespace
	if !regexp.MustCompile(`^stackhpc-made-this-cluster-lon-[a-z2-7]{12}$`).MatchString(stackID) {
		t.Fatalf("StackHPC's stack_id %q", stackID)
	}
	if want := "magnum-" + strings.ReplaceAll(strings.ToLower(c.spec.Cluster.ProjectId), "-", ""); ns != want {
		t.Fatalf("namespace %s, want %s", ns, want)
	}
	if err := stackhpc.WaitReady(ctx, stack.Info.Kubeconfig, ns, stackID, 3); err != nil {
		t.Fatal(err)
	}
	c.spec.Cluster.StackId = stackID
	c.setStatus("CREATE_COMPLETE")
	for _, ng := range c.spec.Nodegroups {
		ng.StackId = stackID
	}
	kc := stack.Env.Client
	assertManagers(t, kc, ns, stackID)

	// The first status call: read from the release another driver made.
	st := clusterStatus(t, c)
	if st.GetStatus() != "CREATE_COMPLETE" || !regexp.MustCompile(`^https://127\.0\.0\.1:[0-9]+$`).MatchString(st.GetApiAddress()) || st.GetCoeVersion() != "v1.33.2" {
		t.Errorf("status %s (%q), api_address %q, coe_version %q", st.GetStatus(), st.GetStatusReason(), st.GetApiAddress(), st.GetCoeVersion())
	}
	c.apply(st)
	for name, want := range map[string]int32{"default-master": 1, "default-worker": 2} {
		if ng := c.nodegroup(name); ng.Status != "CREATE_COMPLETE" || ng.NodeCount != want || len(ng.NodeAddresses) != int(want) {
			t.Errorf("%s: %s, %d nodes, addresses %v", name, ng.Status, ng.NodeCount, ng.NodeAddresses)
		}
	}
	hctx, hcancel := callCtx()
	health, err := driver.GetClusterHealth(hctx, &pb.GetClusterHealthRequest{Spec: c.spec})
	hcancel()
	if err != nil || health.GetHealthStatus() != "HEALTHY" {
		t.Errorf("health %v (%v): %v", health.GetHealthStatus(), health.GetHealthStatusReason(), err)
	}
	// Recognised: the operator's log says so, once; users see nothing.
	if n := logLines(t, "installed by another driver", stackID); n != 1 {
		t.Errorf("%d log lines recognising the release, want 1", n)
	}
	if st.GetStatusReason() != "" {
		t.Errorf("status_reason %q: adoption is not the user's business", st.GetStatusReason())
	}

	// Resize: the preview first, then the change, which must touch only
	// the MachineDeployment's replicas.
	before := snapshotRelease(t, ns, stackID)
	resize := c.resizeRequest(3)
	preview := renderValues(t, c)
	wantResize := []string{
		"- addons.kubernetesDashboard.enabled: true",
		`+ clusterAnnotations.magnum-capi/values: "adopted"`,
		`- clusterNetworking.dnsNameservers: ["8.8.8.8"]`,
		`+ clusterNetworking.internalNetwork.dnsNameservers: ["8.8.8.8"]`,
		"~ nodeGroups[name=default-worker].machineCount: 2 -> 3",
	}
	if got := diffLines(preview.GetDiff()); !reflect.DeepEqual(got, wantResize) || !preview.GetDeployed() || preview.GetChartVersion() != "0.27.0" {
		t.Errorf("resize preview (chart %s, deployed %t):\n%s\nwant:\n%s", preview.GetChartVersion(), preview.GetDeployed(), preview.GetDiff(), strings.Join(wantResize, "\n"))
	}
	if !mentions(preview.GetWarnings(), "written by another driver are kept") {
		t.Errorf("preview warnings %q do not say the values are kept", preview.GetWarnings())
	}
	ctx2, cancel2 := callCtx()
	_, err = driver.ResizeCluster(ctx2, resize)
	cancel2()
	if err != nil {
		t.Fatalf("ResizeCluster: %v", err)
	}
	c.waitFor(t, "UPDATE_COMPLETE", 3*time.Minute)
	if ng := c.nodegroup("default-worker"); ng.Status != "UPDATE_COMPLETE" || ng.NodeCount != 3 || len(ng.NodeAddresses) != 3 {
		t.Errorf("default-worker after the resize: %s, %d nodes, addresses %v", ng.Status, ng.NodeCount, ng.NodeAddresses)
	}
	after := snapshotRelease(t, ns, stackID)
	md := "MachineDeployment/" + stackID + "-default-worker"
	compareReleases(t, before, after, map[string]bool{md: true}, "")
	if got := withoutDriverLabels(manifestDiff(t, before, after)); !reflect.DeepEqual(got, []string{
		"Cluster/" + stackID + ": .metadata.annotations.magnum-capi/values",
		md + ": .spec.replicas",
	}) {
		t.Errorf("the resize changed the release's objects in:\n  %s", strings.Join(got, "\n  "))
	}
	compareMachines(t, before, after, map[string]int{stackID + "-default-worker": 1})
	if got := diffLines(valuesDiff(before, after)); !reflect.DeepEqual(got, wantResize) {
		t.Errorf("the release's values changed in:\n%s\nbut the preview said:\n%s", strings.Join(got, "\n"), strings.Join(wantResize, "\n"))
	}
	var cl unstructured.Unstructured
	cl.SetGroupVersionKind(before.objects["Cluster/"+stackID].GroupVersionKind())
	if err := kc.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: stackID}, &cl); err != nil || helmvalues.ValuesMode(cl.GetAnnotations()) != helmvalues.ValuesAdopted {
		t.Errorf("Cluster marker %q (%v)", helmvalues.ValuesMode(cl.GetAnnotations()), err)
	}

	// A new node group adds its own objects and changes nothing else.
	extra := &pb.NodeGroup{Uuid: uuid.NewString(), Name: "extra", ClusterId: c.spec.Cluster.Uuid, ProjectId: c.spec.Cluster.ProjectId,
		Role: "worker", FlavorId: "m1.large", ImageId: c.spec.ClusterTemplate.ImageId, NodeCount: 1, StackId: stackID, Status: "CREATE_IN_PROGRESS"}
	c.spec.Nodegroups = append(c.spec.Nodegroups, extra)
	c.spec.Cluster.Status = "UPDATE_IN_PROGRESS"
	preview = renderValues(t, c)
	wantCreate := []string{`+ nodeGroups[name=extra]: {"machineCount":1,"machineFlavor":"m1.large","name":"extra"}`}
	if got := diffLines(preview.GetDiff()); !reflect.DeepEqual(got, wantCreate) {
		t.Errorf("node group preview:\n%s\nwant:\n%s", preview.GetDiff(), strings.Join(wantCreate, "\n"))
	}
	ctx2, cancel2 = callCtx()
	_, err = driver.CreateNodeGroup(ctx2, &pb.CreateNodeGroupRequest{Context: c.ctx, Spec: c.spec, NodegroupUuid: extra.Uuid})
	cancel2()
	if err != nil {
		t.Fatalf("CreateNodeGroup: %v", err)
	}
	c.waitFor(t, "UPDATE_COMPLETE", 3*time.Minute)
	if ng := c.nodegroup("extra"); ng.Status != "CREATE_COMPLETE" || len(ng.NodeAddresses) != 1 {
		t.Errorf("extra: %s, addresses %v", ng.Status, ng.NodeAddresses)
	}
	grown := snapshotRelease(t, ns, stackID)
	compareReleases(t, after, grown, nil, stackID+"-extra")
	got := manifestDiff(t, after, grown)
	for _, line := range got {
		if !strings.Contains(line, "/"+stackID+"-extra") || !strings.HasSuffix(line, ": added") {
			t.Errorf("node group create changed %s", line)
		}
	}
	if len(got) != 4 { // MachineDeployment, MachineHealthCheck and the two templates
		t.Errorf("node group create added %d objects: %v", len(got), got)
	}
	compareMachines(t, after, grown, map[string]int{stackID + "-extra": 1})
	if got := diffLines(valuesDiff(after, grown)); !reflect.DeepEqual(got, wantCreate) {
		t.Errorf("the release's values changed in:\n%s\nbut the preview said:\n%s", strings.Join(got, "\n"), strings.Join(wantCreate, "\n"))
	}

	// An upgrade would take the cluster over fully; the preview says so.
	upgraded := gproto.Clone(c.spec).(*pb.ClusterSpec)
	upgraded.ClusterTemplate.ImageId = stack.Info.Images["v1.34.1"]
	for _, ng := range upgraded.Nodegroups { // as the shim's upgrade.spec sends them
		ng.ImageId = upgraded.ClusterTemplate.ImageId
	}
	preview = renderValuesOf(t, c, upgraded)
	for _, want := range []string{
		`~ clusterAnnotations.magnum-capi/values: "adopted" -> "managed"`,
		`~ kubernetesVersion: "1.33.2" -> "1.34.1"`,
		"+ registryMirrors: null",
	} {
		if !strings.Contains(preview.GetDiff(), want+"\n") {
			t.Errorf("upgrade preview lacks %q:\n%s", want, preview.GetDiff())
		}
	}
	if !mentions(preview.GetWarnings(), "this is an upgrade") {
		t.Errorf("upgrade preview warnings %q", preview.GetWarnings())
	}

	// Delete: what the StackHPC driver made goes too.
	creds, err := appCredentials(c)
	if err != nil || !contains(creds, inst.CredentialID) {
		t.Fatalf("the StackHPC credential %s is not in Keystone (%v): %v", inst.CredentialID, creds, err)
	}
	c.remove(t, driver)
	left, err := appCredentials(c)
	if err != nil || contains(left, inst.CredentialID) {
		t.Errorf("application credential %s left after delete (%v)", inst.CredentialID, err)
	}
	var secrets unstructured.UnstructuredList
	secrets.SetAPIVersion("v1")
	secrets.SetKind("SecretList")
	if err := kc.List(context.Background(), &secrets, client.InNamespace(ns), client.MatchingLabels{"magnum.openstack.org/cluster-uuid": c.spec.Cluster.Uuid}); err != nil || len(secrets.Items) != 0 {
		t.Errorf("%d Secrets of the cluster left (%v)", len(secrets.Items), err)
	}
}

func clusterStatus(t *testing.T, c *cluster) *pb.ClusterStatus {
	t.Helper()
	ctx, cancel := callCtx()
	defer cancel()
	resp, err := driver.GetClusterStatus(ctx, &pb.GetClusterStatusRequest{Spec: c.spec})
	if err != nil {
		t.Fatalf("GetClusterStatus: %v", err)
	}
	return resp.GetStatus()
}

func renderValues(t *testing.T, c *cluster) *pb.RenderValuesResponse {
	t.Helper()
	return renderValuesOf(t, c, c.spec)
}

func renderValuesOf(t *testing.T, c *cluster, spec *pb.ClusterSpec) *pb.RenderValuesResponse {
	t.Helper()
	ctx, cancel := callCtx()
	defer cancel()
	resp, err := driver.RenderValues(ctx, &pb.RenderValuesRequest{Context: c.ctx, Spec: spec})
	if err != nil {
		t.Fatalf("RenderValues: %v", err)
	}
	return resp
}

func diffLines(diff string) []string {
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(diff), "\n") {
		if line != "" {
			out = append(out, line)
		}
	}
	// By path, as the preview prints them: "- a", "+ b", "~ c".
	sort.SliceStable(out, func(i, j int) bool { return out[i][min(2, len(out[i])):] < out[j][min(2, len(out[j])):] })
	return out
}

func mentions(list []string, s string) bool {
	for _, item := range list {
		if strings.Contains(item, s) {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, item := range list {
		if item == s {
			return true
		}
	}
	return false
}

// logLines counts the shared sidecar's log lines holding every one of
// parts.
func logLines(t *testing.T, parts ...string) int {
	t.Helper()
	data, err := os.ReadFile(shared.LogFile)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(data), "\n") {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			n++
		}
	}
	return n
}

// releaseSnapshot is one moment of a release: its newest revision's values
// and manifest, and the live objects (with the machines and machine sets
// Cluster API made for it).
type releaseSnapshot struct {
	revision int
	values   map[string]any
	manifest map[string]*unstructured.Unstructured // kind/name -> as rendered
	objects  map[string]*unstructured.Unstructured // kind/name -> live
	// templates are every machine and bootstrap template of the cluster,
	// old ones (kept by the chart) included.
	templates map[string]types.UID
	machines  map[string]machineRecord // name -> its uid and owner
	sets      map[string]types.UID
}

type machineRecord struct {
	uid        types.UID
	deployment string
}

func snapshotRelease(t *testing.T, ns, stackID string) releaseSnapshot {
	t.Helper()
	revs := history(t, stack.Env.Config, ns, stackID)
	last := revs[len(revs)-1]
	objs, err := testchart.ParseManifest(last.Manifest)
	if err != nil {
		t.Fatal(err)
	}
	s := releaseSnapshot{revision: last.Version, values: last.Config, manifest: map[string]*unstructured.Unstructured{},
		objects: map[string]*unstructured.Unstructured{}, templates: map[string]types.UID{}, machines: map[string]machineRecord{}, sets: map[string]types.UID{}}
	kc := stack.Env.Client
	for _, o := range objs {
		key := o.GetKind() + "/" + o.GetName()
		s.manifest[key] = o
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(o.GroupVersionKind())
		if err := kc.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: o.GetName()}, live); err != nil {
			t.Fatalf("%s of the release: %v", key, err)
		}
		s.objects[key] = live
	}
	listed := func(group, version, kind string, labels map[string]string) []unstructured.Unstructured {
		var l unstructured.UnstructuredList
		l.SetAPIVersion(group + "/" + version)
		l.SetKind(kind + "List")
		if err := kc.List(context.Background(), &l, client.InNamespace(ns), client.MatchingLabels(labels)); err != nil {
			t.Fatal(err)
		}
		return l.Items
	}
	byCluster := map[string]string{"capi.stackhpc.com/cluster": stackID}
	for _, kind := range []struct{ group, version, kind string }{
		{"infrastructure.cluster.x-k8s.io", "v1beta1", "OpenStackMachineTemplate"},
		{"bootstrap.cluster.x-k8s.io", "v1beta2", "KubeadmConfigTemplate"},
	} {
		for _, o := range listed(kind.group, kind.version, kind.kind, byCluster) {
			s.templates[kind.kind+"/"+o.GetName()] = o.GetUID()
		}
	}
	for _, m := range listed("cluster.x-k8s.io", "v1beta2", "Machine", map[string]string{"cluster.x-k8s.io/cluster-name": stackID}) {
		if m.GetDeletionTimestamp() == nil {
			s.machines[m.GetName()] = machineRecord{uid: m.GetUID(), deployment: m.GetLabels()["cluster.x-k8s.io/deployment-name"]}
		}
	}
	for _, ms := range listed("cluster.x-k8s.io", "v1beta2", "MachineSet", map[string]string{"cluster.x-k8s.io/cluster-name": stackID}) {
		s.sets["MachineSet/"+ms.GetName()] = ms.GetUID()
	}
	return s
}

// compareReleases checks that every object of before is still there with
// the same UID and, unless changed names it, the same generation (its spec
// untouched), and that no object, machine template or MachineSet appeared
// or went, except those of the node group newGroup (its MachineDeployment's
// name; "" for none).
func compareReleases(t *testing.T, before, after releaseSnapshot, changed map[string]bool, newGroup string) {
	t.Helper()
	if after.revision != before.revision+1 {
		t.Errorf("release revision %d -> %d, want one upgrade", before.revision, after.revision)
	}
	ofNewGroup := func(key string) bool {
		name := key[strings.Index(key, "/")+1:]
		return newGroup != "" && (name == newGroup || strings.HasPrefix(name, newGroup+"-"))
	}
	for key, b := range before.objects {
		a, ok := after.objects[key]
		switch {
		case !ok:
			t.Errorf("%s is gone", key)
		case a.GetUID() != b.GetUID():
			t.Errorf("%s was replaced (uid %s -> %s)", key, b.GetUID(), a.GetUID())
		case changed[key] && a.GetGeneration() == b.GetGeneration():
			t.Errorf("%s: generation %d unchanged; want its change applied", key, a.GetGeneration())
		case !changed[key] && a.GetGeneration() != b.GetGeneration():
			t.Errorf("%s: generation %d -> %d; want it untouched", key, b.GetGeneration(), a.GetGeneration())
		}
	}
	for key := range after.objects {
		if _, ok := before.objects[key]; !ok && !ofNewGroup(key) {
			t.Errorf("%s is new", key)
		}
	}
	for what, pair := range map[string][2]map[string]types.UID{"machine template": {before.templates, after.templates}, "MachineSet": {before.sets, after.sets}} {
		b, a := pair[0], pair[1]
		for k, uid := range b {
			if a[k] != uid {
				t.Errorf("%s %s: uid %s -> %q", what, k, uid, a[k])
			}
		}
		for k := range a {
			if _, ok := b[k]; !ok && !ofNewGroup(k) {
				t.Errorf("new %s %s: machines would be replaced", what, k)
			}
		}
	}
}

// compareMachines checks that every machine of before is still there, and
// that the only new ones are grown[deployment] in each deployment.
func compareMachines(t *testing.T, before, after releaseSnapshot, grown map[string]int) {
	t.Helper()
	for name, m := range before.machines {
		if a, ok := after.machines[name]; !ok || a.uid != m.uid {
			t.Errorf("machine %s was removed or replaced", name)
		}
	}
	got := map[string]int{}
	for name, m := range after.machines {
		if _, ok := before.machines[name]; !ok {
			got[m.deployment]++
		}
	}
	if !reflect.DeepEqual(got, grown) && !(len(got) == 0 && len(grown) == 0) {
		t.Errorf("new machines per MachineDeployment %v, want %v", got, grown)
	}
}

// manifestDiff lists, as "<Kind>/<name>: <path>", where the release's
// rendered objects differ between two snapshots ("added"/"removed" for
// whole objects).
func manifestDiff(t *testing.T, before, after releaseSnapshot) []string {
	t.Helper()
	var out []string
	for key, b := range before.manifest {
		a, ok := after.manifest[key]
		if !ok {
			out = append(out, key+": removed")
			continue
		}
		var paths []string
		treePaths("", b.Object, a.Object, &paths)
		for _, p := range paths {
			out = append(out, key+": "+p)
		}
	}
	for key := range after.manifest {
		if _, ok := before.manifest[key]; !ok {
			out = append(out, key+": added")
		}
	}
	sort.Strings(out)
	return out
}

// withoutDriverLabels drops the driver's cluster-uuid and project-id labels
// from a manifestDiff: the first change this driver makes labels every
// object of the release (metadata only: no spec, no generation, no machine
// changes), and TestTwoManagementClusters checks they are there.
func withoutDriverLabels(paths []string) []string {
	var out []string
	for _, p := range paths {
		if !strings.HasSuffix(p, ": .metadata.labels.magnum.openstack.org/cluster-uuid") &&
			!strings.HasSuffix(p, ": .metadata.labels.magnum.openstack.org/project-id") {
			out = append(out, p)
		}
	}
	return out
}

func treePaths(path string, a, b any, out *[]string) {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		for k := range keys {
			treePaths(path+"."+k, am[k], bm[k], out)
		}
		return
	}
	if !reflect.DeepEqual(a, b) {
		*out = append(*out, path)
	}
}

// valuesDiff is what changed in the release's values between snapshots, as
// the preview prints it.
func valuesDiff(before, after releaseSnapshot) string {
	var b strings.Builder
	for _, c := range helmvalues.DiffValues(before.values, after.values) {
		b.WriteString(c.String() + "\n")
	}
	return b.String()
}

// appCredentials are the ids of the cluster owner's application
// credentials, listed with the owner's token as Keystone's policy allows.
func appCredentials(c *cluster) ([]string, error) {
	req, err := http.NewRequest(http.MethodGet, strings.TrimRight(stack.Info.AuthURL, "/")+"/users/"+c.spec.Cluster.UserId+"/application_credentials", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("X-Auth-Token", c.ctx.AuthToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("listing application credentials: %s", resp.Status)
	}
	var body struct {
		Credentials []struct {
			ID string `json:"id"`
		} `json:"application_credentials"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, err
	}
	var ids []string
	for _, c := range body.Credentials {
		ids = append(ids, c.ID)
	}
	return ids, nil
}

// ownershipOnly says a managed-fields entry holds nothing but what Cluster
// API's controllers and the addon provider (here the test bed's stand-in) add to the
// Secrets of a cluster: owner references, finalizers, and the addon
// provider's watch labels. No driver writes those.
func ownershipOnly(fields *metav1.FieldsV1) bool {
	if fields == nil {
		return false
	}
	var set map[string]map[string]any
	if err := json.Unmarshal(fields.Raw, &set); err != nil || len(set) != 1 || set["f:metadata"] == nil {
		return false
	}
	for key, sub := range set["f:metadata"] {
		switch key {
		case "f:ownerReferences", "f:finalizers", ".":
		case "f:labels":
			labels, _ := sub.(map[string]any)
			for label := range labels {
				if label != "." && !strings.HasPrefix(label, "f:addons.stackhpc.com/") {
					return false
				}
			}
		default:
			return false
		}
	}
	return true
}

// assertManagers checks the release was written as the StackHPC driver
// writes it: its Secrets by server-side apply as "magnum", the chart's
// objects by the helm binary, none of them by this driver's sidecar.
func assertManagers(t *testing.T, kc client.Client, ns, stackID string) {
	t.Helper()
	managers := func(gvk schema.GroupVersionKind, name string) []string {
		o := &unstructured.Unstructured{}
		o.SetGroupVersionKind(gvk)
		if err := kc.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, o); err != nil {
			t.Fatalf("%s %s: %v", gvk.Kind, name, err)
		}
		var out []string
		for _, f := range o.GetManagedFields() {
			if f.Subresource == "" && !ownershipOnly(f.FieldsV1) {
				out = append(out, f.Manager+"/"+string(f.Operation))
			}
		}
		sort.Strings(out)
		return out
	}
	secret := schema.GroupVersionKind{Version: "v1", Kind: "Secret"}
	for _, suffix := range []string{"-cloud-credentials", "-ca", "-etcd", "-proxy", "-sa"} {
		if got := managers(secret, stackID+suffix); !reflect.DeepEqual(got, []string{"magnum/Apply"}) {
			t.Errorf("Secret %s%s written by %v, want magnum/Apply", stackID, suffix, got)
		}
	}
	for _, o := range []struct {
		gvk  schema.GroupVersionKind
		name string
	}{
		{schema.GroupVersionKind{Group: "cluster.x-k8s.io", Version: "v1beta2", Kind: "Cluster"}, stackID},
		{schema.GroupVersionKind{Group: "cluster.x-k8s.io", Version: "v1beta2", Kind: "MachineDeployment"}, stackID + "-default-worker"},
	} {
		if got := managers(o.gvk, o.name); !contains(got, "helm/Update") {
			t.Errorf("%s %s written by %v, want helm/Update among them", o.gvk.Kind, o.name, got)
		}
	}
}
