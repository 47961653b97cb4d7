package magnum

import (
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
