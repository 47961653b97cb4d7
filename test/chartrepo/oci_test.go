package chartrepo

import (
	"maps"
	"strings"
	"testing"
)

// TestOCILocateChart pulls charts pushed with Helm's registry client by
// oci:// reference and version, as `helm install oci://...` does.
func TestOCILocateChart(t *testing.T) {
	reg, err := StartOCI(OCIOptions{Charts: testCharts()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reg.Close() })
	ref := reg.Ref("openstack-cluster")
	if want := "oci://" + reg.Host() + "/charts/openstack-cluster"; ref != want || !strings.HasPrefix(reg.Host(), "127.0.0.1:") {
		t.Errorf("Ref %q, want %q on 127.0.0.1", ref, want)
	}
	for _, version := range []string{"0.27.0", "0.27.1"} {
		ch, err := locateOCI(t, ref, version)
		if err != nil {
			t.Fatalf("locating %s %s: %v", ref, version, err)
		}
		if ch.Name() != "openstack-cluster" || ch.Metadata.Version != version {
			t.Errorf("got chart %s %s, want openstack-cluster %s", ch.Name(), ch.Metadata.Version, version)
		}
		if len(ch.Dependencies()) != 1 {
			t.Errorf("the pushed chart lost its addons subchart")
		}
		if got := reg.Requests("/v2/charts/openstack-cluster/manifests/" + version); got == 0 {
			t.Errorf("no manifest request for %s: %v", version, reg.RequestCounts())
		}
	}
	if _, err := locateOCI(t, ref, "9.9.9"); err == nil {
		t.Error("located a version that was never pushed")
	}
}

// TestOCIOffline takes the registry down and back up with its charts.
func TestOCIOffline(t *testing.T) {
	reg, err := StartOCI(OCIOptions{Charts: testCharts()[:1], Repository: "/capi/"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reg.Close() })
	ref := reg.Ref("openstack-cluster")
	if !strings.HasSuffix(ref, "/capi/openstack-cluster") {
		t.Errorf("Ref %q, want it under /capi/", ref)
	}
	if err := reg.SetOnline(false); err != nil {
		t.Fatal(err)
	}
	before := reg.RequestCounts()
	if _, err := locateOCI(t, ref, "0.27.0"); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("offline registry: error %v, want connection refused", err)
	}
	if err := reg.SetOnline(true); err != nil {
		t.Fatal(err)
	}
	if after := reg.RequestCounts(); !maps.Equal(after, before) {
		t.Errorf("requests reached the registry while it was offline: %v then %v", before, after)
	}
	if err := reg.Publish(Chart{Dir: testCharts()[0].Dir, Version: "0.27.1"}); err != nil {
		t.Fatal(err)
	}
	for _, version := range []string{"0.27.0", "0.27.1"} {
		if _, err := locateOCI(t, ref, version); err != nil {
			t.Errorf("back online, %s: %v", version, err)
		}
	}
}
