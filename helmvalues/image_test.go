package helmvalues

import "testing"

// TestOSDistro: the image's os_distro reaches osDistro lowercased; only
// flatcar switches the chart to Ignition, so Debian and Rocky images take
// kubeadm's cloud-init path like Ubuntu.
func TestOSDistro(t *testing.T) {
	for distro, want := range map[string]string{"ubuntu": "ubuntu", "Debian": "debian", "rocky": "rocky", "flatcar": "flatcar"} {
		in := minimalInput(t)
		in.Image.OSDistro = distro
		res, err := Build(in, DefaultConfig())
		if err != nil {
			t.Fatalf("%s: %v", distro, err)
		}
		if res.Values["osDistro"] != want {
			t.Errorf("%s: osDistro %v, want %s", distro, res.Values["osDistro"], want)
		}
	}
	in := minimalInput(t)
	in.Image.OSDistro = "rocky linux"
	_, err := Build(in, DefaultConfig())
	assertErrorNames(t, err, []string{"image.os_distro", `"rocky linux"`, "the image property os_distro"})
}
