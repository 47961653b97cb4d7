package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/magnum-capi/magnum-capi/helmvalues"
)

// --deployed: what applying the rendered input to a deployed release would
// change, worked out offline exactly as the sidecar's RenderValues (and the
// mutation after it) does: helmvalues.Adopt, then helmvalues.DiffValues. An
// operator can preview the first resize of a cluster another driver
// installed before switching it to this driver, from `helm get values`.

// renderDeployed prints the chart version change (if any) and the changes,
// or "no changes"; Adopt's notes go to stderr with the warnings.
func renderDeployed(current helmvalues.Result, path, chartVersion string, stdin io.Reader, stdout, stderr io.Writer) int {
	fail := func(code int, err error) int {
		fmt.Fprintln(stdout, "error: "+helmvalues.OneLine(err))
		return code
	}
	values, code, err := readDeployed(path, stdin)
	if err != nil {
		return fail(code, err)
	}
	chartVersion = strings.TrimPrefix(chartVersion, "openstack-cluster-")
	if chartVersion == "" {
		chartVersion = current.ChartVersion
	}
	a, err := helmvalues.Adopt(helmvalues.AdoptInput{
		Deployed: values, DeployedChart: chartVersion,
		Rendered: current.Values, RenderedChart: current.ChartVersion,
	})
	if err != nil {
		return fail(exitInvalid, fmt.Errorf("%s: %w", inputName(path), err))
	}
	printWarnings(stderr, "", current.Warnings)
	printWarnings(stderr, "", a.Notes)
	fmt.Fprintf(stderr, "note: values to apply: %s\n", a.Mode)
	changes := helmvalues.DiffValues(values, a.Values)
	if chartVersion != a.ChartVersion {
		fmt.Fprintf(stdout, "~ chart version: %s -> %s\n", chartVersion, a.ChartVersion)
	} else if len(changes) == 0 {
		fmt.Fprintln(stdout, "no changes")
	}
	for _, c := range changes {
		fmt.Fprintln(stdout, c.String())
	}
	return exitOK
}

// readDeployed reads deployed values as `helm get values` prints them: YAML
// or JSON, with or without the "USER-SUPPLIED VALUES:" heading of its table
// output. "null" or nothing (a release installed without values) is an empty
// document.
func readDeployed(path string, stdin io.Reader) (map[string]any, int, error) {
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(io.LimitReader(stdin, maxDeployedBytes+1))
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, exitIO, err
	}
	name := inputName(path)
	if len(data) > maxDeployedBytes {
		return nil, exitInvalid, fmt.Errorf("%s: more than %d bytes", name, maxDeployedBytes)
	}
	if rest, ok := bytes.CutPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte("USER-SUPPLIED VALUES:")); ok {
		data = rest
	}
	var values map[string]any
	if err := yaml.Unmarshal(data, &values); err != nil {
		return nil, exitInvalid, fmt.Errorf("%s: not a values document: %w", name, err)
	}
	if values == nil {
		values = map[string]any{}
	}
	return values, exitOK, nil
}

// maxDeployedBytes bounds --deployed: real values are a few kilobytes.
const maxDeployedBytes = 8 << 20
