package magnum

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strings"
)

// listOptions prints, as JSON {group: [option, ...]}, every option the
// release's Magnum and the installed shim read: what oslo-config-generator
// lists for Magnum's sample configuration (the namespaces of Magnum's own
// magnum-config-generator.conf that the guide's sections come from, and the
// shim's entry point), plus the options of each Keystone auth plugin a
// group's auth_type names (keystoneauth registers those only when it loads
// the plugin, so the generator cannot list them).
const listOptions = `
import io, json, sys
from keystoneauth1 import loading
from oslo_config import cfg, generator
import magnum.conf.profiler
if magnum.conf.profiler.profiler_opts is None:
    # Without osprofiler (Debian's python3-magnum in trixie and sid does
    # not depend on it) Magnum reads no [profiler] options, but its
    # list_opts dereferences the missing module and breaks the generator.
    magnum.conf.profiler.list_opts = lambda: {}
namespaces = ["magnum.conf", "oslo.concurrency", "oslo.db", "oslo.log", "oslo.messaging",
              "keystonemiddleware.auth_token", "magnum_capi"]
conf = cfg.ConfigOpts()
generator.register_cli_opts(conf)
conf(["--format", "json"] + [a for n in namespaces for a in ("--namespace", n)])
out = io.StringIO()
generator.generate(conf, output_file=out)
generated = json.loads(out.getvalue())["options"]
read = {g: [o["name"].replace("-", "_") for o in v["opts"]] for g, v in generated.items()}
for group, plugin in json.loads(sys.argv[1]).items():
    read.setdefault(group, []).extend(o.dest for o in loading.get_auth_plugin_conf_options(plugin))
print(json.dumps(read))
`

// ReadOptions is every option, by group, that the Magnum in ns and the
// shim installed there read; authPlugins maps groups to the auth plugin
// their auth_type names.
func ReadOptions(ctx context.Context, ns *Namespace, authPlugins map[string]string) (map[string][]string, error) {
	arg, err := json.Marshal(authPlugins)
	if err != nil {
		return nil, err
	}
	out, err := ns.Command(ctx, nil, "python3", "-c", listOptions, string(arg)).Output()
	if err != nil {
		if exit, ok := err.(*exec.ExitError); ok {
			err = fmt.Errorf("%w: %s", err, exit.Stderr)
		}
		return nil, fmt.Errorf("listing the options Magnum reads: %w", err)
	}
	var read map[string][]string
	if err := json.Unmarshal(out, &read); err != nil {
		return nil, fmt.Errorf("listing the options Magnum reads: %w: %s", err, out)
	}
	return read, nil
}

// guideOptionRE is an option of magnum.conf named in the guide's prose as
// `[section] option`.
var guideOptionRE = regexp.MustCompile("`\\[([A-Za-z_]+)\\] ([a-z_]+)`")

// GuideOptions are the magnum.conf options the operator guide names: every
// one of its magnum.conf block, and those its prose names as `[section]
// option`; each as "section.option", and the auth plugin each section's
// auth_type names.
func GuideOptions() (options []string, authPlugins map[string]string, err error) {
	block, err := GuideBlock("magnum-conf")
	if err != nil {
		return nil, nil, err
	}
	f, err := parseINI(block)
	if err != nil {
		return nil, nil, err
	}
	authPlugins = map[string]string{}
	for _, s := range f.sections {
		for _, o := range f.options[s] {
			options = append(options, s+"."+o.key)
			if o.key == "auth_type" {
				authPlugins[s] = o.value
			}
		}
	}
	guide, err := readGuide()
	if err != nil {
		return nil, nil, err
	}
	for _, m := range guideOptionRE.FindAllStringSubmatch(guide, -1) {
		if name := m[1] + "." + m[2]; !slices.Contains(options, name) {
			options = append(options, name)
		}
	}
	return options, authPlugins, nil
}

// releaseOnly are the guide's options that only some releases read (from
// a release on, or before one), as the guide says beside each; "trust.*"
// is a whole section.
var releaseOnly = map[string]struct{ from, before int }{
	"drivers.default_driver": {from: 23},   // "Earlier releases ignore the option."
	"trust.*":                {before: 23}, // "Magnum 23 no longer does and ignores this section."
}

// readBy: whether the guide says the release reads the option.
func readBy(rel Release, name string) bool {
	group, _, _ := strings.Cut(name, ".")
	only, ok := releaseOnly[name]
	if !ok {
		if only, ok = releaseOnly[group+".*"]; !ok {
			return true
		}
	}
	return rel.Major >= only.from && (only.before == 0 || rel.Major < only.before)
}

// UnreadOptions are the guide's options the release does not read, except
// those the guide says it ignores (releaseOnly).
func UnreadOptions(rel Release, guide []string, read map[string][]string) []string {
	var unread []string
	for _, name := range guide {
		group, key, _ := strings.Cut(name, ".")
		if !slices.Contains(read[group], key) && readBy(rel, name) {
			unread = append(unread, fmt.Sprintf("[%s] %s", group, key))
		}
	}
	return unread
}
