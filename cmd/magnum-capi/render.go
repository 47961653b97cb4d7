package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"sigs.k8s.io/yaml"

	"github.com/magnum-capi/magnum-capi/helmvalues"
	"github.com/magnum-capi/magnum-capi/server/config"
)

// Exit codes of render: 0 rendered, 1 could not read a file, 2 invalid
// input, configuration or flags. On failure the error is stdout's last line.
const (
	exitOK      = 0
	exitIO      = 1
	exitInvalid = 2
)

// renderFlags are render's flags.
type renderFlags struct {
	input, other, deployed, deployedChart, configPath string
	strict                                            bool
}

// parseRenderFlags reads args; errHelp when the user asked for usage.
func parseRenderFlags(args []string, stderr io.Writer) (renderFlags, error) {
	var f renderFlags
	fs := flag.NewFlagSet("render", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: magnum-capi render [--input FILE] [--diff OTHER | --deployed VALUES [--deployed-chart VERSION]] [--config FILE] [--strict-labels]")
		fmt.Fprintln(stderr, "  FILE holds Magnum's objects as as_dict() gives them:")
		fmt.Fprintln(stderr, `  {"cluster_template": {...}, "cluster": {...}, "nodegroups": [...], "image": {"id", "os_distro", "kube_version"}, "volume_types": [...], "external_network_id": "..."}`)
		fs.PrintDefaults()
	}
	fs.StringVar(&f.input, "input", "-", "input `FILE` (JSON); - reads standard input")
	fs.StringVar(&f.other, "diff", "", "second input `FILE`: print what changes from --input to it instead of the values")
	fs.StringVar(&f.deployed, "deployed", "", "the deployed release's values `FILE` (helm get values STACK_ID -n NAMESPACE -o yaml): print what applying --input to it changes, as the sidecar's RenderValues does (another driver's release is adopted, not replaced)")
	fs.StringVar(&f.deployedChart, "deployed-chart", "", "the deployed release's chart `VERSION` (helm list shows it); default: the version --input renders with")
	fs.StringVar(&f.configPath, "config", "", "the sidecar's configuration `FILE` (docs/configuration.md): its chart.version and values.* options over the defaults, as serve reads them")
	fs.BoolVar(&f.strict, "strict-labels", false, "make unknown labels errors")
	if err := fs.Parse(args); err != nil {
		return f, err
	}
	if fs.NArg() > 0 {
		return f, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return f, f.check()
}

// check refuses combinations of flags that cannot work.
func (f renderFlags) check() error {
	switch {
	case f.input == "-" && f.other == "-":
		return errors.New("--input and --diff cannot both read standard input")
	case f.deployed != "" && f.other != "":
		return errors.New("--diff and --deployed are exclusive")
	case f.deployedChart != "" && f.deployed == "":
		return errors.New("--deployed-chart needs --deployed")
	case f.input == "-" && f.deployed == "-":
		return errors.New("--input and --deployed cannot both read standard input")
	}
	return nil
}

// config is the values mapping's configuration: the defaults, the sidecar's
// --config file over them (read as serve reads it), --strict-labels last.
func (f renderFlags) config() (helmvalues.Config, int, error) {
	cfg := helmvalues.DefaultConfig()
	if f.configPath != "" {
		if _, err := os.Stat(f.configPath); err != nil {
			return cfg, exitIO, err
		}
		var err error
		if cfg, err = config.LoadValues(f.configPath); err != nil {
			return cfg, exitInvalid, err
		}
	}
	if f.strict {
		cfg.StrictLabels = true
	}
	return cfg, exitOK, nil
}

// runRender prints the chart values for one input, or with --diff what
// changes between two inputs (e.g. the cluster on its current template and on
// the template it would be upgraded to), or with --deployed what applying the
// input to a deployed release would change (render_deployed.go).
func runRender(_ context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fail := func(code int, err error) int {
		fmt.Fprintln(stdout, "error: "+helmvalues.OneLine(err))
		return code
	}
	f, err := parseRenderFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		return fail(exitInvalid, err)
	}
	cfg, code, err := f.config()
	if err != nil {
		return fail(code, err)
	}
	current, code, err := renderInput(f.input, stdin, cfg)
	if err != nil {
		return fail(code, err)
	}
	switch {
	case f.deployed != "":
		return renderDeployed(current, f.deployed, f.deployedChart, stdin, stdout, stderr)
	case f.other == "":
		printWarnings(stderr, "", current.Warnings)
		out, err := yaml.Marshal(current.Values)
		if err != nil {
			return fail(exitIO, err)
		}
		if _, err := stdout.Write(out); err != nil {
			return exitIO
		}
		return exitOK
	}
	next, code, err := renderInput(f.other, stdin, cfg)
	if err != nil {
		return fail(code, err)
	}
	printWarnings(stderr, inputName(f.input)+": ", current.Warnings)
	printWarnings(stderr, inputName(f.other)+": ", next.Warnings)
	printDiff(stdout, current, next)
	return exitOK
}

// printDiff writes what changes from one rendering to the next.
func printDiff(stdout io.Writer, current, next helmvalues.Result) {
	changes := helmvalues.DiffValues(current.Values, next.Values)
	if current.ChartVersion != next.ChartVersion {
		fmt.Fprintf(stdout, "~ chart version: %s -> %s\n", current.ChartVersion, next.ChartVersion)
	} else if len(changes) == 0 {
		fmt.Fprintln(stdout, "no changes")
	}
	for _, c := range changes {
		fmt.Fprintln(stdout, c.String())
	}
}

// renderInput reads and builds one input; the code says whether a failure is
// the input's fault (exitInvalid) or reading it failed (exitIO).
func renderInput(path string, stdin io.Reader, cfg helmvalues.Config) (helmvalues.Result, int, error) {
	r, name := stdin, inputName(path)
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return helmvalues.Result{}, exitIO, err
		}
		defer f.Close()
		r = f
	}
	in, err := helmvalues.DecodeInput(r)
	if err != nil {
		var fieldErr *helmvalues.FieldError
		if errors.As(err, &fieldErr) {
			return helmvalues.Result{}, exitInvalid, fmt.Errorf("%s: %w", name, err)
		}
		return helmvalues.Result{}, exitIO, fmt.Errorf("%s: %w", name, err)
	}
	res, err := helmvalues.Build(in, cfg)
	if err != nil {
		return res, exitInvalid, fmt.Errorf("%s: %w", name, err)
	}
	return res, exitOK, nil
}

func printWarnings(w io.Writer, prefix string, warnings []string) {
	for _, warning := range warnings {
		fmt.Fprintf(w, "warning: %s%s\n", prefix, warning)
	}
}

func inputName(path string) string {
	if path == "-" {
		return "standard input"
	}
	return path
}
