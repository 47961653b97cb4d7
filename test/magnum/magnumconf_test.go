package magnum

import (
	"slices"
	"strings"
	"testing"
)

func TestMagnumConfFromTheGuide(t *testing.T) {
	conf, err := MagnumConf(Site{
		"database": {"connection": "mysql+pymysql://magnum:x@127.0.0.1:3307/magnum15"},
		"api":      {"port": "40000"},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"[database]\nconnection = mysql+pymysql://magnum:x@127.0.0.1:3307/magnum15\n",
		"port = 40000\n",
		"sidecar_address = unix:///run/magnum-capi/magnum-capi.sock\n",
		"[trust]\ntrustee_domain_name = magnum\n",
	} {
		if !strings.Contains(conf, want) {
			t.Errorf("magnum.conf lacks %q:\n%s", want, conf)
		}
	}
	if _, err := MagnumConf(Site{"DEFAULT": {"not_in_the_guide": "x"}}); err == nil || !strings.Contains(err.Error(), "not_in_the_guide") {
		t.Errorf("an option the guide does not show: %v, want an error naming it", err)
	}
}

func TestParseINIRejectsOptionsOutsideSections(t *testing.T) {
	if _, err := parseINI("debug = true\n[DEFAULT]\n"); err == nil {
		t.Error("an option before any section parsed")
	}
	if _, err := parseINI("[DEFAULT]\njust text\n"); err == nil {
		t.Error("a line without = parsed")
	}
}

func TestGuideOptions(t *testing.T) {
	options, plugins, err := GuideOptions()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"magnum_capi.sidecar_address", "trust.trustee_domain_name", "DEFAULT.rpc_response_timeout", "drivers.default_driver"} {
		if !slices.Contains(options, want) {
			t.Errorf("GuideOptions lacks %s: %v", want, options)
		}
	}
	if plugins["keystone_auth"] != "password" || plugins["keystone_authtoken"] != "password" {
		t.Errorf("auth plugins %v, want password for keystone_auth and keystone_authtoken", plugins)
	}
}

func TestUnreadOptions(t *testing.T) {
	guide := []string{"api.port", "drivers.default_driver", "magnum_capi.provides", "api.prot", "trust.trustee_domain_name"}
	read := map[string][]string{"api": {"host", "port"}, "magnum_capi": {"provides"}, "drivers": {"disabled_drivers"}}
	for _, tc := range []struct {
		major int
		want  []string
	}{
		{15, []string{"[api] prot", "[trust] trustee_domain_name"}},
		{23, []string{"[drivers] default_driver", "[api] prot"}},
	} {
		if got := UnreadOptions(Release{Major: tc.major}, guide, read); !slices.Equal(got, tc.want) {
			t.Errorf("Magnum %d: unread %v, want %v", tc.major, got, tc.want)
		}
	}
}
