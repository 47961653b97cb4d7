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
)

func init() {
	commands["render"] = command{
		summary: "Magnum objects (JSON) -> openstack-cluster Helm values; --diff previews an upgrade, --deployed a change to a deployed release",
		run:     runRender,
	}
}

// Exit codes of render: 0 rendered, 1 could not read a file, 2 invalid
// input, configuration or flags. On failure the error is stdout's last line.
const (
	exitOK      = 0
	exitIO      = 1
	exitInvalid = 2
)

// runRender prints the chart values for one input, or with --diff what
// changes between two inputs (e.g. the cluster on its current template and on
// the template it would be upgraded to), or with --deployed what applying the
// input to a deployed release would change (render_deployed.go).
func runRender(_ context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("render", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: magnum-capi render [--input FILE] [--diff OTHER | --deployed VALUES [--deployed-chart VERSION]] [--config FILE] [--strict-labels]")
		fmt.Fprintln(stderr, "  FILE holds Magnum's objects as as_dict() gives them:")
		fmt.Fprintln(stderr, `  {"cluster_template": {...}, "cluster": {...}, "nodegroups": [...], "image": {"id", "os_distro", "kube_version"}, "volume_types": [...], "external_network_id": "..."}`)
		fs.PrintDefaults()
	}
	input := fs.String("input", "-", "input `FILE` (JSON); - reads standard input")
	other := fs.String("diff", "", "second input `FILE`: print what changes from --input to it instead of the values")
	deployed := fs.String("deployed", "", "the deployed release's values `FILE` (helm get values STACK_ID -n NAMESPACE -o yaml): print what applying --input to it changes, as the sidecar's RenderValues does (another driver's release is adopted, not replaced)")
	deployedChart := fs.String("deployed-chart", "", "the deployed release's chart `VERSION` (helm list shows it); default: the version --input renders with")
	configPath := fs.String("config", "", "driver configuration `FILE` (YAML or JSON, the helmvalues.Config fields) over the defaults")
	strict := fs.Bool("strict-labels", false, "make unknown labels errors")
	fail := func(code int, err error) int {
		fmt.Fprintln(stdout, "error: "+helmvalues.OneLine(err))
		return code
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitInvalid
		}
		return fail(exitInvalid, err)
	}
	if fs.NArg() > 0 {
		return fail(exitInvalid, fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}
	if *input == "-" && *other == "-" {
		return fail(exitInvalid, errors.New("--input and --diff cannot both read standard input"))
	}
	if *deployed != "" && *other != "" {
		return fail(exitInvalid, errors.New("--diff and --deployed are exclusive"))
	}
	if *deployedChart != "" && *deployed == "" {
		return fail(exitInvalid, errors.New("--deployed-chart needs --deployed"))
	}
	if *input == "-" && *deployed == "-" {
		return fail(exitInvalid, errors.New("--input and --deployed cannot both read standard input"))
	}

	cfg := helmvalues.DefaultConfig()
	if *configPath != "" {
		data, err := os.ReadFile(*configPath)
		if err != nil {
			return fail(exitIO, err)
		}
		if err := yaml.UnmarshalStrict(data, &cfg); err != nil {
			return fail(exitInvalid, fmt.Errorf("%s: %w", *configPath, err))
		}
	}
	if *strict {
		cfg.StrictLabels = true
	}

	current, code, err := renderInput(*input, stdin, cfg)
	if err != nil {
		return fail(code, err)
	}
	if *deployed != "" {
		return renderDeployed(current, *deployed, *deployedChart, stdin, stdout, stderr)
	}
	if *other == "" {
		printWarnings(stderr, "", current.Warnings)
		out, err := yaml.Marshal(current.Values)
		if err != nil {
			return fail(exitIO, err)
		}
		_, err = stdout.Write(out)
		if err != nil {
			return exitIO
		}
		return exitOK
	}

	next, code, err := renderInput(*other, stdin, cfg)
	if err != nil {
		return fail(code, err)
	}
	printWarnings(stderr, inputName(*input)+": ", current.Warnings)
	printWarnings(stderr, inputName(*other)+": ", next.Warnings)
	changes := helmvalues.DiffValues(current.Values, next.Values)
	if current.ChartVersion != next.ChartVersion {
		fmt.Fprintf(stdout, "~ chart version: %s -> %s\n", current.ChartVersion, next.ChartVersion)
	} else if len(changes) == 0 {
		fmt.Fprintln(stdout, "no changes")
	}
	for _, c := range changes {
		fmt.Fprintln(stdout, c.String())
	}
	return exitOK
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
