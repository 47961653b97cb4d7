package deploy

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// shimProvidesDefault is the shim's [magnum_capi] provides default, read
// from its option definition.
func shimProvidesDefault(t *testing.T) []string {
	t.Helper()
	conf, err := os.ReadFile("../magnum/magnum_capi/conf.py")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)"provides",\s*default=\[([^\]]*)\]`).FindStringSubmatch(string(conf))
	if m == nil {
		t.Fatal("magnum/magnum_capi/conf.py: no provides option with a list default")
	}
	return regexp.MustCompile(`"([^"]+)"`).FindAllString(m[1], -1)
}

// iniOption is option's value in section of an INI text ("" and false when
// not set).
func iniOption(text, section, option string) (string, bool) {
	cur := ""
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]") {
			cur = line[1 : len(line)-1]
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok && cur == section && strings.TrimSpace(k) == option {
			return strings.TrimSpace(v), true
		}
	}
	return "", false
}

// TestImageOSDistroIsProvided: the os_distro a document registers images
// with is one of the (vm, os_distro, kubernetes) tuples the configuration
// it shows gives the driver. Magnum checks the tuple when a cluster is
// created, whichever driver the image's magnum_driver names, so a mismatch
// fails every create. The Kolla example's magnum.conf override (else the
// shim's default) goes with the Kolla README, the operator guide's
// magnum.conf with the operator guide.
func TestImageOSDistroIsProvided(t *testing.T) {
	kollaConf, err := os.ReadFile("kolla-ansible/config/magnum.conf")
	if err != nil {
		t.Fatal(err)
	}
	guideConf := guideBlock(t, "magnum-conf")
	for doc, conf := range map[string]string{"kolla-ansible/README.md": string(kollaConf), "../docs/operator-guide.md": guideConf} {
		provides := shimProvidesDefault(t)
		if v, ok := iniOption(conf, "magnum_capi", "provides"); ok {
			provides = nil
			for _, p := range strings.Split(v, ",") {
				provides = append(provides, `"`+strings.TrimSpace(p)+`"`)
			}
		}
		text, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		distros := regexp.MustCompile(`--property os_distro=([\w.-]+)`).FindAllStringSubmatch(string(text), -1)
		if len(distros) == 0 {
			t.Fatalf("%s registers no image with --property os_distro=", doc)
		}
		for _, d := range distros {
			if !slices.Contains(provides, `"vm:`+d[1]+`:kubernetes"`) {
				t.Errorf("%s registers images with os_distro=%s, but its configuration provides %v: Magnum would refuse every cluster", doc, d[1], provides)
			}
		}
	}
}
