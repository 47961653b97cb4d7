package deploy

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// imageSpec is what deploy/Dockerfile's final stage says of the image's
// configuration: what buildah is told and the built image is compared with.
type imageSpec struct {
	user        string
	env         []string // KEY=value
	volumes     []string
	entrypoint  []string
	cmd         []string
	workdir     string // "" when the stage sets none: "/"
	expose      []string
	health      []string // HEALTHCHECK CMD, exec form
	healthFlags map[string]time.Duration
	copies      []dockerCopy
}

// finalStage parses the final stage's instructions into an imageSpec,
// failing on an instruction this test does not know how to reproduce, so a
// change of the Dockerfile cannot pass unnoticed.
func finalStage(t *testing.T, stages []stage) imageSpec {
	t.Helper()
	final := stages[len(stages)-1]
	spec := imageSpec{healthFlags: map[string]time.Duration{}}
	jsonArray := func(kind, s string) []string {
		var out []string
		if err := json.Unmarshal([]byte(s), &out); err != nil {
			t.Fatalf("%s %s: want the exec (JSON array) form: %v", kind, s, err)
		}
		return out
	}
	for _, l := range final.lines {
		kind, rest, _ := strings.Cut(l, " ")
		switch kind {
		case "USER":
			spec.user = rest
		case "ENV":
			for _, kv := range strings.Fields(rest) {
				if !strings.Contains(kv, "=") {
					t.Fatalf("ENV %s: want KEY=value pairs", rest)
				}
				spec.env = append(spec.env, kv)
			}
		case "VOLUME":
			spec.volumes = append(spec.volumes, jsonArray(kind, rest)...)
		case "ENTRYPOINT":
			spec.entrypoint = jsonArray(kind, rest)
		case "CMD":
			spec.cmd = jsonArray(kind, rest)
		case "WORKDIR":
			spec.workdir = rest
		case "EXPOSE":
			spec.expose = append(spec.expose, strings.Fields(rest)...)
		case "HEALTHCHECK":
			spec.parseHealthcheck(t, rest)
		case "COPY":
			spec.copies = append(spec.copies, parseCopy(rest))
		default:
			t.Fatalf("final stage: %s: the image test does not reproduce this instruction", l)
		}
	}
	return spec
}

// parseHealthcheck reads HEALTHCHECK [--interval=D ...] CMD [...].
func (s *imageSpec) parseHealthcheck(t *testing.T, rest string) {
	t.Helper()
	flags, cmd, ok := strings.Cut(rest, "CMD ")
	if !ok {
		t.Fatalf("HEALTHCHECK %s: want CMD", rest)
	}
	for _, f := range strings.Fields(flags) {
		name, val, _ := strings.Cut(strings.TrimPrefix(f, "--"), "=")
		d, err := time.ParseDuration(val)
		if err != nil {
			t.Fatalf("HEALTHCHECK --%s=%s: %v", name, val, err)
		}
		s.healthFlags[name] = d
	}
	if err := json.Unmarshal([]byte(cmd), &s.health); err != nil {
		t.Fatalf("HEALTHCHECK CMD %s: want the exec form: %v", cmd, err)
	}
	for _, a := range s.health {
		if strings.ContainsAny(a, " \t") {
			// buildah config --healthcheck splits its argument at spaces.
			t.Fatalf("HEALTHCHECK CMD argument %q has a space: buildah cannot reproduce it", a)
		}
	}
}

// userIDs is USER's uid and gid: numeric, as an image without /etc/passwd
// entries for its user needs.
func (s imageSpec) userIDs(t *testing.T) (int, int) {
	t.Helper()
	var uid, gid int
	if _, err := fmt.Sscanf(s.user, "%d:%d", &uid, &gid); err != nil {
		t.Fatalf("USER %s: want numeric uid:gid: %v", s.user, err)
	}
	return uid, gid
}
