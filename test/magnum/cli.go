package magnum

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// CLI runs Debian's openstack client (python3-openstackclient with
// python3-magnumclient's `coe` commands) as one identity, from a clouds.yaml
// of its own, with nothing of the developer's environment.
type CLI struct {
	env []string
	// Echo, when set, receives each command line and its output, as a
	// person at a terminal would see them (make demo).
	Echo io.Writer
}

// openstackCLI is Debian's client: the python on PATH may be another one.
const openstackCLI = "/usr/bin/openstack"

// NewCLI writes a clouds.yaml with one cloud into dir and returns a CLI
// using it.
func NewCLI(dir, cloud string, config map[string]any) (*CLI, error) {
	if _, err := os.Stat(openstackCLI); err != nil {
		return nil, fmt.Errorf("%s missing: run hack/deps.sh (Debian packages python3-openstackclient python3-magnumclient)", openstackCLI)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	b, err := yaml.Marshal(map[string]any{"clouds": map[string]any{cloud: config}})
	if err != nil {
		return nil, err
	}
	file := filepath.Join(dir, "clouds.yaml")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		return nil, err
	}
	return &CLI{env: []string{
		"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=" + dir, "LANG=C.UTF-8",
		// `coe cluster config` reads it to print the export line.
		"SHELL=/bin/sh",
		"OS_CLIENT_CONFIG_FILE=" + file, "OS_CLOUD=" + cloud,
	}}, nil
}

// CLIError is a command that failed, with what it printed.
type CLIError struct {
	Args   []string
	Err    error
	Output string
}

func (e *CLIError) Error() string {
	return fmt.Sprintf("openstack %s: %v\n%s", strings.Join(e.Args, " "), e.Err, strings.TrimSpace(e.Output))
}

// Run runs `openstack args...` with extra environment variables and returns
// its standard output; a failure is a *CLIError carrying standard error.
func (c *CLI) Run(ctx context.Context, env []string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, openstackCLI, args...)
	cmd.Env = append(append([]string{}, c.env...), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if c.Echo != nil {
		fmt.Fprintf(c.Echo, "$ openstack %s\n%s%s", strings.Join(quoteArgs(args), " "), stdout.String(), stderr.String())
	}
	if err != nil {
		return stdout.String(), &CLIError{Args: args, Err: err, Output: stderr.String() + stdout.String()}
	}
	return stdout.String(), nil
}

// JSON runs a command with -f json and decodes its answer into out.
func (c *CLI) JSON(ctx context.Context, out any, args ...string) error {
	text, err := c.Run(ctx, nil, append(args, "-f", "json")...)
	if err != nil {
		return err
	}
	if err := json.Unmarshal([]byte(text), out); err != nil {
		return fmt.Errorf("openstack %s: not JSON: %w\n%s", strings.Join(args, " "), err, text)
	}
	return nil
}

// Script runs a shell script (an operator guide block) with this CLI's
// identity and extra variables; `openstack` in it is Debian's.
func (c *CLI) Script(ctx context.Context, script string, env []string) (string, error) {
	cmd := exec.CommandContext(ctx, "/bin/sh", "-ec", script)
	cmd.Env = append(append([]string{}, c.env...), env...)
	out, err := cmd.CombinedOutput()
	if c.Echo != nil {
		fmt.Fprintf(c.Echo, "$ %s\n%s", script, out)
	}
	if err != nil {
		return string(out), fmt.Errorf("%w:\n%s\n%s", err, script, out)
	}
	return string(out), nil
}

func quoteArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\"'$,=") && !strings.HasPrefix(a, "--") {
			out[i] = shellQuote(a)
		} else {
			out[i] = a
		}
	}
	return out
}
