package helmvalues

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"sigs.k8s.io/yaml"
)

// strictSchemaDir holds the strict values schemas of the chart's main
// branch (see its PROVENANCE.md): the chart's own and its addons subchart's,
// which Helm applies to the values under addons.
const strictSchemaDir = "../test/testdata/chart-main-schema"

// strictSchemaGaps are the values the driver sends that the strict schema
// refuses although the chart's templates (0.27 and the schema's branch
// alike) read them, each with the reason. The schema is generated from the
// chart's default values, so what has no default is missing from it; Helm
// would refuse these values until the schema learns them.
var strictSchemaGaps = map[string]string{
	"/addons/openstack/cloudConfig/LoadBalancer": "the addons chart renders every section of cloudConfig into cloud.conf; " +
		"the schema knows only the default BlockStorage section",
	"/addons/openstack/csiCinder/defaultStorageClass/allowedTopologies": "a list of topology selector terms, which the template renders as the " +
		"StorageClass's allowedTopologies (StackHPC sends an empty one); the schema types it from its empty default as an object",
	"/addons/openstack/k8sKeystoneAuth/values": "templates/openstack/k8s-keystone-auth.yaml renders it as the webhook's values; the schema omits it",
	// The placement of system pods when a worker group can be empty
	// (placement.go): the addons chart hands release.values to the addon's
	// chart whatever they hold; the schema lists only the defaults' keys.
	"/addons/ingress/traefik/release/values/tolerations":                                              releaseValuesGap,
	"/addons/ingress/traefik/release/values/affinity":                                                 releaseValuesGap,
	"/addons/monitoring/kubePrometheusStack/release/values/prometheus/prometheusSpec/tolerations":     releaseValuesGap,
	"/addons/monitoring/kubePrometheusStack/release/values/prometheus/prometheusSpec/affinity":        releaseValuesGap,
	"/addons/monitoring/kubePrometheusStack/release/values/alertmanager/alertmanagerSpec/tolerations": releaseValuesGap,
	"/addons/monitoring/kubePrometheusStack/release/values/alertmanager/alertmanagerSpec/affinity":    releaseValuesGap,
	"/addons/monitoring/lokiStack/release/values/loki/tolerations":                                    releaseValuesGap,
	"/addons/monitoring/lokiStack/release/values/loki/affinity":                                       releaseValuesGap,
	"/controlPlane/kubeadmConfigSpec/clusterConfiguration/apiServer": "the control plane template merges the whole kubeadmConfigSpec; " +
		"the schema knows only the defaults' controllerManager and scheduler",
	"/nodeGroupDefaults/machineNetworking/ports": "a list of CAPO ports, which the machine template renders as such; " +
		"the schema types it from its empty default as an object",
}

const releaseValuesGap = "the addon's chart reads it; the schema of release.values lists only the keys of the defaults"

var strictSchemas = sync.OnceValues(func() ([2]*jsonschema.Schema, error) {
	var out [2]*jsonschema.Schema
	stubs := remoteStubs{}
	paths := make([]string, len(out))
	for i, name := range []string{"openstack-cluster", "cluster-addons"} {
		path, err := filepath.Abs(filepath.Join(strictSchemaDir, name+".values.schema.json"))
		if err != nil {
			return out, err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return out, err
		}
		stubs.add(data)
		paths[i] = path
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(stubs)
	for i, path := range paths {
		var err error
		if out[i], err = c.Compile(path); err != nil {
			return out, err
		}
	}
	return out, nil
})

// remoteStubs loads the schemas' own files from disk and answers each
// remote reference (Kubernetes and Cluster API object schemas on
// raw.githubusercontent.com) with an empty, permissive schema at the
// referenced place: nothing is fetched. The kubeadm specs those references
// cover are checked against Cluster API's own schema by assertKubeadmSchema.
type remoteStubs map[string]map[string]any

var remoteRef = regexp.MustCompile(`"\$ref":\s*"(https://raw\.githubusercontent\.com/[^"#]+)#?([^"]*)"`)

// add makes a stub document for every remote reference in schema, holding
// an empty object at the reference's JSON pointer.
func (s remoteStubs) add(schema []byte) {
	for _, m := range remoteRef.FindAllSubmatch(schema, -1) {
		doc := s[string(m[1])]
		if doc == nil {
			doc = map[string]any{}
			s[string(m[1])] = doc
		}
		for _, token := range strings.Split(strings.Trim(string(m[2]), "/"), "/") {
			if token == "" {
				continue
			}
			next, _ := doc[token].(map[string]any)
			if next == nil {
				next = map[string]any{}
				doc[token] = next
			}
			doc = next
		}
	}
}

func (s remoteStubs) Load(url string) (any, error) {
	if strings.HasPrefix(url, "file://") {
		return jsonschema.FileLoader{}.Load(url)
	}
	if doc, ok := s[url]; ok {
		return doc, nil
	}
	return nil, errors.New("no schema is fetched: " + url)
}

// assertStrictSchema validates values as the chart's main branch would:
// the whole against the chart's schema, addons also against the addons
// subchart's. Violations at a path in strictSchemaGaps are allowed.
func assertStrictSchema(t *testing.T, values map[string]any) {
	t.Helper()
	for _, msg := range strictSchemaViolations(t, values) {
		t.Errorf("the chart's strict schema refuses: %s", msg)
	}
}

func strictSchemaViolations(t *testing.T, values map[string]any) []string {
	t.Helper()
	schemas, err := strictSchemas()
	if err != nil {
		t.Fatalf("compiling the strict schema: %v", err)
	}
	// Helm validates the values coalesced with the chart's defaults, and a
	// subchart's with the subchart's defaults under the parent's.
	parent := coalesce(readDefaults(t, "openstack-cluster"), asJSON(t, values))
	parentAddons, _ := parent["addons"].(map[string]any)
	addons := coalesce(readDefaults(t, "cluster-addons"), parentAddons)
	var out []string
	for i, v := range []map[string]any{parent, addons} {
		prefix := ""
		if i == 1 {
			prefix = "/addons"
		}
		var verr *jsonschema.ValidationError
		if err := schemas[i].Validate(v); errors.As(err, &verr) {
			out = append(out, leafViolations(verr, prefix)...)
		} else if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// readDefaults is a chart's values.yaml from the strict schema's branch, as
// the validator takes it.
func readDefaults(t *testing.T, chart string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(strictSchemaDir, chart+".values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var values map[string]any
	if err := yaml.Unmarshal(data, &values); err != nil {
		t.Fatal(err)
	}
	return asJSON(t, values)
}

// coalesce merges values over defaults as Helm does: maps key by key, a
// null removes the default, anything else replaces it.
func coalesce(defaults, values map[string]any) map[string]any {
	out := make(map[string]any, len(defaults)+len(values))
	for k, v := range defaults {
		out[k] = v
	}
	for k, v := range values {
		switch {
		case v == nil:
			delete(out, k)
		case isMap(v) && isMap(out[k]):
			out[k] = coalesce(out[k].(map[string]any), v.(map[string]any))
		default:
			out[k] = v
		}
	}
	return out
}

func isMap(v any) bool {
	_, ok := v.(map[string]any)
	return ok
}

// leafViolations flattens a validation error to its causes, each as
// "<path>: <message>", one for each property an additionalProperties
// refusal names, leaving out the allowed gaps.
func leafViolations(e *jsonschema.ValidationError, prefix string) []string {
	var out []string
	for _, c := range e.Causes {
		out = append(out, leafViolations(c, prefix)...)
	}
	if len(e.Causes) > 0 {
		return out
	}
	path := strings.TrimSuffix(prefix+"/"+strings.Join(e.InstanceLocation, "/"), "/")
	paths := []string{path}
	if extra, ok := e.ErrorKind.(*kind.AdditionalProperties); ok {
		paths = paths[:0]
		for _, p := range extra.Properties {
			paths = append(paths, path+"/"+p)
		}
	}
	for _, p := range paths {
		if _, gap := strictSchemaGaps[p]; !gap {
			out = append(out, p+": "+e.Error())
		}
	}
	return out
}

// asJSON is values as encoding/json decodes them, the form the validator
// takes (numbers as json.Number).
func asJSON(t *testing.T, values map[string]any) map[string]any {
	t.Helper()
	b, err := json.Marshal(values)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	m, _ := doc.(map[string]any)
	return m
}

// TestStrictSchemaLabels builds every valid example of every label in the
// registry, where the label can be given (cluster, template, node group),
// and validates the values against the chart main branch's strict schema.
func TestStrictSchemaLabels(t *testing.T) {
	cfg := DefaultConfig()
	cfg.KeystoneAuthURL = "https://keystone.example.com:5000/v3"
	base, err := Build(minimalInput(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	assertStrictSchema(t, base.Values)
	for i := range labelSpecs {
		spec := &labelSpecs[i]
		wheres := []string{""}
		switch spec.Scope {
		case scopeTemplate:
			wheres = []string{"template"}
		case scopeNodeGroup:
			wheres = append(wheres, "node group")
		}
		t.Run(spec.Name, func(t *testing.T) {
			for _, where := range wheres {
				for _, v := range spec.Valid {
					res, err := Build(exampleInput(t, spec, v, where), cfg)
					if err != nil {
						t.Fatalf("%s %q: %v", where, v, err)
					}
					assertStrictSchema(t, res.Values)
				}
			}
		})
	}
}

// TestStrictSchemaSelf makes sure the check catches what the strict schema
// refuses, and lets the allowed gaps through.
func TestStrictSchemaSelf(t *testing.T) {
	tests := []struct {
		name   string
		values map[string]any
		bad    []string
	}{
		{"current keys", map[string]any{"apiServer": map[string]any{"allowedCIDRs": []any{"10.0.0.0/8"}}}, nil},
		{"stale apiServer key", map[string]any{"apiServer": map[string]any{"allowedCidrs": []any{"10.0.0.0/8"}}}, []string{"/apiServer/allowedCidrs"}},
		{"stale clusterNetworking key", map[string]any{"clusterNetworking": map[string]any{"dnsNameservers": []any{"1.1.1.1"}}}, []string{"/clusterNetworking/dnsNameservers"}},
		{"stale addon", map[string]any{"addons": map[string]any{"kubernetesDashboard": map[string]any{"enabled": true}}}, []string{"/addons/kubernetesDashboard"}},
		{"beside a gap", map[string]any{"controlPlane": map[string]any{"kubeadmConfigSpec": map[string]any{"clusterConfiguration": map[string]any{
			"apiServer": map[string]any{}, "apiserver": map[string]any{}}}}}, []string{"/controlPlane/kubeadmConfigSpec/clusterConfiguration/apiserver"}},
		{"allowed gap", map[string]any{"addons": map[string]any{"openstack": map[string]any{"cloudConfig": map[string]any{"LoadBalancer": map[string]any{"lb-method": "ROUND_ROBIN"}}}}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := strictSchemaViolations(t, tt.values)
			if len(got) != len(tt.bad) {
				t.Fatalf("violations %q, want at %q", got, tt.bad)
			}
			for i, want := range tt.bad {
				if !strings.HasPrefix(got[i], want+": ") {
					t.Errorf("violation %q, want at %s", got[i], want)
				}
			}
		})
	}
}
