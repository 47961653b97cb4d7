// Package config is the sidecar's configuration: one YAML file, overridable
// by MAGNUM_CAPI_* environment variables and command-line flags (viper),
// validated at start with errors that name the option. docs/configuration.md
// documents every option; deploy/config/magnum-capi.yaml is an annotated
// example.
package config
