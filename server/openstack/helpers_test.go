package openstack

import (
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/magnum-capi/magnum-capi/test/openstackfake"
)

const (
	testProject = "8d9f6a1b2c3e4f5061728394a5b6c7d8"
	otherProjet = "1a2b3c4d5e6f47089a0b1c2d3e4f5a6b"
	testUser    = "4e5f60718293a4b5c6d7e8f90a1b2c3d"
	userToken   = "gAAAAAB-test-user-token-never-printed"
)

// class is the gRPC class server/errors.go would give err, checked in the
// same order.
func class(err error) string {
	var (
		ia interface{ InvalidArgument() bool }
		fp interface{ FailedPrecondition() bool }
		un interface{ Unavailable() bool }
	)
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &ia) && ia.InvalidArgument():
		return "InvalidArgument"
	case errors.As(err, &fp) && fp.FailedPrecondition():
		return "FailedPrecondition"
	case errors.As(err, &un) && un.Unavailable():
		return "Unavailable"
	}
	return "Internal"
}

// wantFailedPrecondition fails the test unless err is FailedPrecondition,
// says saying, and does not quote secret (a password, the file's text);
// secret "" is not checked.
func wantFailedPrecondition(t *testing.T, err error, saying, secret string) {
	t.Helper()
	if class(err) != "FailedPrecondition" || !strings.Contains(err.Error(), saying) {
		t.Fatalf("error %v (%s), want FailedPrecondition saying %q", err, class(err), saying)
	}
	if secret != "" && strings.Contains(err.Error(), secret) {
		t.Fatalf("error quotes %q: %v", secret, err)
	}
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// fakeCloud is the fake with a user token and the objects the Facts tests
// refer to by name.
type fakeCloud struct {
	fake    *openstackfake.Server
	adapter *Adapter
	caller  Caller

	kubeImage, noKubeImage, queuedImage, otherPrivate openstackfake.Image
	public, internal, private, otherNet               openstackfake.Network
	privateSubnet, otherSubnet                        openstackfake.Subnet
	small, medium                                     openstackfake.Flavor
}

func newFakeCloud(t *testing.T, cfg Config) *fakeCloud {
	t.Helper()
	s := openstackfake.NewT(t)
	s.AcceptToken(openstackfake.Token{ID: userToken, UserID: testUser, ProjectID: testProject})
	if cfg.Timeout == 0 {
		cfg.Timeout = 2 * time.Second
	}
	a, err := New(cfg, quietLog())
	if err != nil {
		t.Fatal(err)
	}
	c := &fakeCloud{fake: s, adapter: a, caller: Caller{
		AuthToken: userToken, AuthURL: s.IdentityURL(), UserID: testUser, ProjectID: testProject, RegionName: "RegionOne",
	}}
	c.kubeImage = s.AddImage(openstackfake.Image{Name: "ubuntu-jammy-kube-v1.30.2", Owner: otherProjet,
		Properties: map[string]string{"kube_version": "v1.30.2", "os_distro": "ubuntu", "os_version": "22.04"}})
	c.noKubeImage = s.AddImage(openstackfake.Image{Name: "plain-ubuntu", Owner: otherProjet, Properties: map[string]string{"os_distro": "ubuntu"}})
	c.queuedImage = s.AddImage(openstackfake.Image{Name: "uploading", Owner: testProject, Status: "queued", Properties: map[string]string{"kube_version": "v1.31.0"}})
	c.otherPrivate = s.AddImage(openstackfake.Image{Name: "their-image", Owner: otherProjet, Visibility: "private", Properties: map[string]string{"kube_version": "v1.30.2"}})
	s.AddImage(openstackfake.Image{Name: "twice", Owner: otherProjet, Properties: map[string]string{"kube_version": "v1.29.0"}})
	s.AddImage(openstackfake.Image{Name: "twice", Owner: testProject, Properties: map[string]string{"kube_version": "v1.29.1"}})

	c.public = s.AddNetwork(openstackfake.Network{Name: "public", ProjectID: otherProjet, External: true})
	c.internal = s.AddNetwork(openstackfake.Network{Name: "internal", ProjectID: testProject})
	c.private = s.AddNetwork(openstackfake.Network{Name: "private", ProjectID: testProject})
	c.otherNet = s.AddNetwork(openstackfake.Network{Name: "lab", ProjectID: testProject})
	s.AddNetwork(openstackfake.Network{Name: "shared", ProjectID: otherProjet, Shared: true})
	s.AddNetwork(openstackfake.Network{Name: "shared", ProjectID: testProject})
	s.AddNetwork(openstackfake.Network{Name: "private", ProjectID: otherProjet}) // invisible: no clash
	c.privateSubnet = s.AddSubnet(openstackfake.Subnet{Name: "private-subnet", NetworkID: c.private.ID, ProjectID: testProject})
	c.otherSubnet = s.AddSubnet(openstackfake.Subnet{Name: "lab-subnet", NetworkID: c.otherNet.ID, ProjectID: testProject, CIDR: "10.1.0.0/24"})

	s.AddVolumeType(openstackfake.VolumeType{Name: "__DEFAULT__", Description: "Default Volume Type"})
	s.AddVolumeType(openstackfake.VolumeType{Name: "ssd", ExtraSpecs: map[string]string{"RESKEY:availability_zones": "nova"}})
	s.AddVolumeType(openstackfake.VolumeType{Name: "admin-only", Private: true})

	c.small = s.AddFlavor(openstackfake.Flavor{ID: "1", Name: "m1.small", RAM: 2048, VCPUs: 1, Disk: 20})
	c.medium = s.AddFlavor(openstackfake.Flavor{ID: "3", Name: "m1.medium", RAM: 4096, VCPUs: 2, Disk: 40})
	s.AddFlavor(openstackfake.Flavor{Name: "gpu", RAM: 8192, VCPUs: 4})
	s.AddFlavor(openstackfake.Flavor{Name: "gpu", RAM: 16384, VCPUs: 8})
	return c
}
