package config

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// flagOptions are the options that also have a command-line flag: the ones
// an operator changes while debugging (log level, addresses) or overrides
// per host. Everything else lives in the file or the environment.
var flagOptions = []struct{ key, usage string }{
	{"listen", "gRPC address: unix:///path or host:port (TCP requires tls.*)"},
	{"socketGroup", "group that may use the unix socket (mode 0660); empty: owner only (0600)"},
	{"metricsAddress", `host:port serving /metrics and /healthz; "" disables`},
	{"log.level", "debug, info, warn or error"},
	{"log.format", "json or text"},
	{"namespacePrefix", "per-project namespaces are <prefix>-<project id>"},
	{"defaultManagementCluster", "management cluster for templates without capi_management_cluster"},
	{"chart.repository", "openstack-cluster chart source: https://, oci:// or a local path"},
	{"chart.version", "chart version unless a template's capi_helm_chart_version says otherwise"},
}

// FlagName is an option's flag: log.level -> --log-level,
// metricsAddress -> --metrics-address.
func FlagName(key string) string {
	var b strings.Builder
	for i, r := range key {
		switch {
		case r == '.':
			b.WriteByte('-')
		case unicode.IsUpper(r):
			if i > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(unicode.ToLower(r))
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// BindFlags defines the options' flags on fs and binds them to v: a flag
// given on the command line wins over the environment, which wins over the
// file, which wins over the defaults.
func BindFlags(fs *pflag.FlagSet, v *viper.Viper) error {
	for _, o := range flagOptions {
		name := FlagName(o.key)
		fs.String(name, "", fmt.Sprintf("%s (option %s, env %s)", o.usage, o.key, EnvName(o.key)))
		if err := v.BindPFlag(o.key, fs.Lookup(name)); err != nil {
			return fmt.Errorf("binding --%s: %w", name, err)
		}
	}
	return nil
}
