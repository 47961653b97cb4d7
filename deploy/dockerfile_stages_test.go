package deploy

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// stage is one FROM ... [AS name] of the Dockerfile and its instructions.
type stage struct {
	name  string
	lines []string
}

// stages splits the Dockerfile's instructions at each FROM.
func (d dockerfile) stages() []stage {
	var out []stage
	for _, l := range d.lines {
		word, rest, _ := strings.Cut(l, " ")
		if word == "FROM" {
			f := strings.Fields(rest)
			name := f[0]
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				name = f[2]
			}
			out = append(out, stage{name: name})
			continue
		}
		if len(out) > 0 {
			out[len(out)-1].lines = append(out[len(out)-1].lines, l)
		}
	}
	return out
}

// instructions returns the arguments of every instruction of kind in s.
func (s stage) instructions(kind string) []string {
	var out []string
	for _, l := range s.lines {
		if word, rest, _ := strings.Cut(l, " "); word == kind {
			out = append(out, rest)
		}
	}
	return out
}

// dockerCopy is a COPY instruction: its --from and --chown flags, sources
// and destination.
type dockerCopy struct {
	from, chown string
	src         []string
	dst         string
}

func parseCopy(args string) dockerCopy {
	var c dockerCopy
	var paths []string
	for _, w := range strings.Fields(args) {
		switch {
		case strings.HasPrefix(w, "--from="):
			c.from = strings.TrimPrefix(w, "--from=")
		case strings.HasPrefix(w, "--chown="):
			c.chown = strings.TrimPrefix(w, "--chown=")
		default:
			paths = append(paths, w)
		}
	}
	if len(paths) >= 2 {
		c.src, c.dst = paths[:len(paths)-1], paths[len(paths)-1]
	}
	return c
}

func stageNamed(t *testing.T, stages []stage, name string) stage {
	t.Helper()
	for _, s := range stages {
		if s.name == name {
			return s
		}
	}
	t.Fatalf("deploy/Dockerfile has no stage %q", name)
	return stage{}
}

// TestDockerfileVolumesOwned: every VOLUME of the final stage exists in the
// image owned by the USER it runs as, and writable by it. Docker fills a new
// named volume from the image's directory (owner and mode included); a
// directory the image lacks becomes a root-owned volume, where uid 42428
// cannot create its socket or chart cache. Without a Docker engine: the
// directory must be copied into the final stage with --chown=<USER> as the
// content of a directory a RUN of the source stage makes, and that RUN,
// executed here under a temporary root, must make it writable by its owner.
func TestDockerfileVolumesOwned(t *testing.T) {
	stages := parseDockerfile(t).stages()
	final := stages[len(stages)-1]
	users := final.instructions("USER")
	volumes := final.instructions("VOLUME")
	if len(users) != 1 || len(volumes) != 1 {
		t.Fatalf("final stage: USER %v, VOLUME %v: want one of each", users, volumes)
	}
	var paths []string
	if err := json.Unmarshal([]byte(volumes[0]), &paths); err != nil || len(paths) == 0 {
		t.Fatalf("VOLUME %s: want a JSON array of paths (%v)", volumes[0], err)
	}
	for _, volume := range paths {
		parent, name := filepath.Dir(volume)+"/", filepath.Base(volume)
		var made string
		for _, c := range final.instructions("COPY") {
			cp := parseCopy(c)
			if cp.dst == parent && cp.chown == users[0] && len(cp.src) == 1 && strings.HasSuffix(cp.src[0], "/") && cp.from != "" {
				made = madeBy(t, stageNamed(t, stages, cp.from), cp.src[0]+name)
			}
		}
		if made == "" {
			t.Errorf("VOLUME %s: no COPY --from=<stage> --chown=%s <dir>/ %s of a directory that stage makes: the volume would be root's", volume, users[0], parent)
		}
	}
}

// madeBy runs the RUN of s that makes dir under a temporary root and returns
// dir's path there ("" when no RUN makes it), failing when the directory is
// not writable by its owner.
func madeBy(t *testing.T, s stage, dir string) string {
	t.Helper()
	for _, run := range s.instructions("RUN") {
		if !slices.Contains(strings.Fields(run), dir) || !regexp.MustCompile(`^(install -d|mkdir) `).MatchString(run) {
			continue
		}
		root := t.TempDir()
		rebased := strings.ReplaceAll(run, " /", " "+root+"/")
		if out, err := exec.Command("/bin/sh", "-ec", rebased).CombinedOutput(); err != nil {
			t.Fatalf("RUN %s (under %s): %v\n%s", run, root, err, out)
		}
		info, err := os.Stat(filepath.Join(root, dir))
		if err != nil {
			t.Fatalf("RUN %s did not make %s: %v", run, dir, err)
		}
		if info.Mode().Perm()&0o700 != 0o700 {
			t.Errorf("RUN %s makes %s mode %v: its owner cannot write it", run, dir, info.Mode().Perm())
		}
		return root
	}
	return ""
}
