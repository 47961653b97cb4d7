// Command keystone runs a real Keystone (test/keystone) and, unless -fake=false,
// the OpenStack fake (test/openstackfake) registered in its catalog, for
// processes that are not Go tests: the Python end-to-end tests and the
// `make demo` test bed.
//
// When everything answers it prints one line of JSON on stdout (see
// Output) and stays up until SIGINT or SIGTERM, or until its parent dies
// (it asks the kernel for SIGTERM then, so `go run` being killed stops it).
// Exit status 1 and a message on stderr when Keystone cannot start (run
// hack/deps.sh when packages are missing).
//
//	go run ./test/cmd/keystone | head -1 | jq .auth_url
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/magnum-capi/magnum-capi/test/keystone"
	"github.com/magnum-capi/magnum-capi/test/openstackfake"
)

func main() {
	dir := flag.String("dir", "", "state directory (default: a new temporary one, removed at exit)")
	keep := flag.Bool("keep", false, "keep the state directory at exit")
	withFake := flag.Bool("fake", true, "also serve Glance/Neutron/Cinder/Nova from test/openstackfake, in Keystone's catalog")
	flag.Parse()

	// Die with the parent: a test harness that is killed must not leave
	// Keystone running. uwsgi already dies with this process.
	syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGTERM), 0)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Stdout, *dir, *keep, *withFake); err != nil {
		fmt.Fprintln(os.Stderr, "keystone:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, stdout io.Writer, dir string, keep, withFake bool) error {
	startCtx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	k, err := keystone.Start(startCtx, keystone.Options{Dir: dir, KeepDir: keep})
	if err != nil {
		return err
	}
	defer k.Stop()
	out, err := seed(startCtx, k)
	if err != nil {
		return fmt.Errorf("%w%s", err, k.Logs())
	}
	if withFake {
		fake := openstackfake.New()
		defer fake.Close()
		if err := k.RegisterEndpoints(startCtx, fake.Endpoints()); err != nil {
			return err
		}
		fake.UseKeystone(k.AuthURL)
		out.Fake = seedFake(fake, out)
	}
	out.StartSeconds = k.StartDuration.Seconds()
	if err := json.NewEncoder(stdout).Encode(out); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "keystone: serving %s (started in %s); stop with SIGINT or SIGTERM\n", k.AuthURL, k.StartDuration.Round(time.Millisecond))
	<-ctx.Done()
	return nil
}

// seed creates the demo identities: the sidecar's service user and a
// Magnum user with a token.
func seed(ctx context.Context, k *keystone.Keystone) (Output, error) {
	out := Output{AuthURL: k.AuthURL, Region: keystone.Region, Dir: k.Dir}
	out.Admin = keystone.User{ID: k.AdminUserID, Name: keystone.AdminUser, Password: keystone.AdminPassword,
		ProjectID: k.AdminProjectID, ProjectName: keystone.AdminProject, Role: "admin"}
	service, err := k.CreateProject(ctx, "service")
	if err != nil {
		return out, err
	}
	magnum, err := k.CreateUser(ctx, "magnum", service, "admin")
	if err != nil {
		return out, err
	}
	out.Service = ServiceIdentity{User: magnum, Cloud: "magnum", CloudsYAML: filepath.Join(k.Dir, "clouds.yaml")}
	if err := k.WriteCloudsYAML(out.Service.CloudsYAML, out.Service.Cloud, magnum); err != nil {
		return out, err
	}
	demo, err := k.CreateProject(ctx, "demo")
	if err != nil {
		return out, err
	}
	user, err := k.CreateUser(ctx, "demo", demo, "member")
	if err != nil {
		return out, err
	}
	tok, err := k.Token(ctx, user)
	if err != nil {
		return out, err
	}
	out.User = UserWithToken{User: user, Token: tok.ID, TokenExpiresAt: tok.ExpiresAt}
	return out, nil
}

// seedFake registers what a demo cluster refers to: an image with
// kube_version, an external network, a tenant network and subnet in the
// demo project, volume types and flavors.
func seedFake(fake *openstackfake.Server, out Output) *FakeCloud {
	img := fake.AddImage(openstackfake.Image{Name: "ubuntu-jammy-kube-v1.30.2", Owner: out.Service.User.ProjectID,
		Properties: map[string]string{"kube_version": "v1.30.2", "os_distro": "ubuntu", "os_version": "22.04"}})
	public := fake.AddNetwork(openstackfake.Network{Name: "public", ProjectID: out.Service.User.ProjectID, External: true})
	private := fake.AddNetwork(openstackfake.Network{Name: "private", ProjectID: out.User.ProjectID})
	subnet := fake.AddSubnet(openstackfake.Subnet{Name: "private-subnet", NetworkID: private.ID, ProjectID: out.User.ProjectID})
	def := fake.AddVolumeType(openstackfake.VolumeType{Name: "__DEFAULT__", Description: "Default Volume Type"})
	ssd := fake.AddVolumeType(openstackfake.VolumeType{Name: "ssd"})
	small := fake.AddFlavor(openstackfake.Flavor{ID: "2", Name: "m1.small", RAM: 2048, VCPUs: 1, Disk: 20})
	medium := fake.AddFlavor(openstackfake.Flavor{ID: "3", Name: "m1.medium", RAM: 4096, VCPUs: 2, Disk: 40})
	return &FakeCloud{
		URL:             fake.URL,
		Endpoints:       fake.Endpoints(),
		Image:           Named{ID: img.ID, Name: img.Name},
		KubeVersion:     img.Properties["kube_version"],
		OSDistro:        img.Properties["os_distro"],
		ExternalNetwork: Named{ID: public.ID, Name: public.Name},
		FixedNetwork:    Named{ID: private.ID, Name: private.Name},
		FixedSubnet:     Named{ID: subnet.ID, Name: subnet.Name},
		VolumeTypes:     []Named{{ID: def.ID, Name: def.Name}, {ID: ssd.ID, Name: ssd.Name}},
		Flavors:         []Named{{ID: small.ID, Name: small.Name}, {ID: medium.ID, Name: medium.Name}},
	}
}
