package config

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/viper"

	"github.com/magnum-capi/magnum-capi/helmvalues"
)

// ValuesConfig is the values mapping's configuration: the chart version and
// the values.* options, with each trusted CA's file read. serve and
// `magnum-capi render --config` both get theirs here, so the two read the
// same options under the same names.
func (c Config) ValuesConfig() (helmvalues.Config, error) {
	v := helmvalues.DefaultConfig()
	if c.Chart.Version != "" {
		v.DefaultChartVersion = c.Chart.Version
	}
	v.StrictLabels = c.Values.StrictLabels
	v.LabelDefaults = c.Values.LabelDefaults
	v.KeystoneAuthURL = c.Values.KeystoneAuthURL
	v.CSICinderDefaultVolumeType = c.Values.CSICinderDefaultVolumeType
	v.CSICinderAllowedTopologies = c.Values.CSICinderAllowedTopologies
	v.KeepChartRegistryMirrors = c.Values.KeepChartRegistryMirrors
	v.GPUPCIAliases = c.Values.GPUPCIAliases
	v.GPUResourceName = c.Values.GPUResourceName
	if len(c.Values.MirroredRegistries) > 0 {
		v.MirroredRegistries = c.Values.MirroredRegistries
	}
	var p problems
	for i, m := range c.Values.RegistryMirrors {
		if v.RegistryMirrors == nil {
			v.RegistryMirrors = map[string][]string{}
		}
		if _, dup := v.RegistryMirrors[m.Registry]; dup {
			p.bad(fmt.Sprintf("values.registryMirrors[%d].registry", i), m.Registry, "each registry is listed once, with all its mirrors")
		}
		if len(m.Mirrors) == 0 {
			p.bad(fmt.Sprintf("values.registryMirrors[%d].mirrors", i), "", "at least one mirror URL, such as https://mirror.example.com/v2/docker.io")
		}
		v.RegistryMirrors[m.Registry] = m.Mirrors
	}
	for i, ca := range c.Values.TrustedCAs {
		if v.TrustedCAs == nil {
			v.TrustedCAs = map[string]string{}
		}
		if _, dup := v.TrustedCAs[ca.Name]; dup {
			p.bad(fmt.Sprintf("values.trustedCAs[%d].name", i), ca.Name, "names must be unique")
		}
		pem, err := os.ReadFile(ca.File)
		if err != nil {
			p.bad(fmt.Sprintf("values.trustedCAs[%d].file", i), ca.File, "cannot be read: "+readProblem(err))
		}
		v.TrustedCAs[ca.Name] = string(pem)
	}
	return v, errors.Join(p...)
}

// validateValues checks the values.* options as the mapping will use them,
// so a bad site default fails at start, naming its option, instead of at a
// user's first create.
func (c Config) validateValues(bad func(option, value, problem string)) {
	v, err := c.ValuesConfig()
	for _, e := range flatten(err) {
		var oe *OptionError
		if errors.As(e, &oe) {
			bad(oe.Option, oe.Value, oe.Problem)
		}
	}
	for _, e := range flatten(helmvalues.ValidateConfig(v)) {
		var ce *helmvalues.ConfigError
		if errors.As(e, &ce) {
			bad(ce.Field, ce.Value, ce.Problem)
		}
	}
}

// LoadValues reads the configuration file (and MAGNUM_CAPI_* variables) as
// serve does, but checks and returns only what the values mapping uses:
// `magnum-capi render --config` renders with a sidecar's own file, which
// need not name a reachable management cluster on the operator's laptop.
func LoadValues(file string) (helmvalues.Config, error) {
	c, err := read(file, viper.New())
	if err != nil {
		return helmvalues.Config{}, err
	}
	var p problems
	c.validateValues(p.bad)
	if len(p) > 0 {
		return helmvalues.Config{}, errors.Join(p...)
	}
	return c.ValuesConfig()
}

// flatten lists the errors a joined error holds (itself if not joined).
func flatten(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// readProblem is why a file cannot be read, without the path the option's
// value already shows.
func readProblem(err error) string {
	if u := errors.Unwrap(err); u != nil {
		return u.Error()
	}
	return err.Error()
}
