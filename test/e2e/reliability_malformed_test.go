package e2e

import (
	"bytes"
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
)

// The catalogue of malformed requests: every RPC of DriverService, each
// malformed part of a request it takes, and what the sidecar must answer.

// reqParts are the pieces an RPC's request is made of; each RPC builds its
// request from the ones it takes.
type reqParts struct {
	ctx       *pb.RequestContext
	spec      *pb.ClusterSpec
	certs     *pb.CertificateAuthorities
	nodegroup string
	count     int32
}

// What an RPC takes besides the spec.
type takes uint

const (
	takesToken     takes = 1 << iota // context.auth_token is required
	takesTemplate                    // spec.cluster_template is required
	takesCerts                       // certificates
	takesNodeGroup                   // nodegroup_uuid of a worker group
	takesCount                       // node_count
	rendersLabels                    // builds chart values, so reads every label
)

type rpcUnderTest struct {
	name  string
	takes takes
	call  func(context.Context, reqParts) error
}

// rpcs is every RPC in driver.proto; TestReliabilityMalformedRequests fails
// if one is missing, so a new RPC cannot skip the catalogue.
var rpcs = []rpcUnderTest{
	{"CreateCluster", takesToken | takesTemplate | takesCerts | rendersLabels, func(ctx context.Context, p reqParts) error {
		_, err := driver.CreateCluster(ctx, &pb.CreateClusterRequest{Context: p.ctx, Spec: p.spec, Certificates: p.certs})
		return err
	}},
	{"UpdateCluster", takesTemplate | rendersLabels, func(ctx context.Context, p reqParts) error {
		_, err := driver.UpdateCluster(ctx, &pb.UpdateClusterRequest{Context: p.ctx, Spec: p.spec})
		return err
	}},
	{"ResizeCluster", takesTemplate | takesNodeGroup | takesCount | rendersLabels, func(ctx context.Context, p reqParts) error {
		_, err := driver.ResizeCluster(ctx, &pb.ResizeClusterRequest{Context: p.ctx, Spec: p.spec, NodegroupUuid: p.nodegroup, NodeCount: p.count})
		return err
	}},
	{"UpgradeCluster", takesTemplate | rendersLabels, func(ctx context.Context, p reqParts) error {
		_, err := driver.UpgradeCluster(ctx, &pb.UpgradeClusterRequest{Context: p.ctx, Spec: p.spec, MaxBatchSize: 1, NodegroupUuid: p.nodegroup})
		return err
	}},
	{"DeleteCluster", 0, func(ctx context.Context, p reqParts) error {
		_, err := driver.DeleteCluster(ctx, &pb.DeleteClusterRequest{Context: p.ctx, Spec: p.spec})
		return err
	}},
	{"CreateNodeGroup", takesTemplate | takesNodeGroup | rendersLabels, func(ctx context.Context, p reqParts) error {
		_, err := driver.CreateNodeGroup(ctx, &pb.CreateNodeGroupRequest{Context: p.ctx, Spec: p.spec, NodegroupUuid: p.nodegroup})
		return err
	}},
	{"UpdateNodeGroup", takesTemplate | takesNodeGroup | rendersLabels, func(ctx context.Context, p reqParts) error {
		_, err := driver.UpdateNodeGroup(ctx, &pb.UpdateNodeGroupRequest{Context: p.ctx, Spec: p.spec, NodegroupUuid: p.nodegroup})
		return err
	}},
	{"DeleteNodeGroup", takesTemplate | takesNodeGroup | rendersLabels, func(ctx context.Context, p reqParts) error {
		_, err := driver.DeleteNodeGroup(ctx, &pb.DeleteNodeGroupRequest{Context: p.ctx, Spec: p.spec, NodegroupUuid: p.nodegroup})
		return err
	}},
	{"GetClusterStatus", 0, func(ctx context.Context, p reqParts) error {
		_, err := driver.GetClusterStatus(ctx, &pb.GetClusterStatusRequest{Spec: p.spec})
		return err
	}},
	{"GetClusterHealth", 0, func(ctx context.Context, p reqParts) error {
		_, err := driver.GetClusterHealth(ctx, &pb.GetClusterHealthRequest{Spec: p.spec})
		return err
	}},
	{"RotateCACertificate", takesTemplate | takesCerts | rendersLabels, func(ctx context.Context, p reqParts) error {
		_, err := driver.RotateCACertificate(ctx, &pb.RotateCACertificateRequest{Context: p.ctx, Spec: p.spec, Certificates: p.certs})
		return err
	}},
	{"RotateCredential", takesToken, func(ctx context.Context, p reqParts) error {
		_, err := driver.RotateCredential(ctx, &pb.RotateCredentialRequest{Context: p.ctx, Spec: p.spec})
		return err
	}},
	{"RenderValues", takesTemplate | rendersLabels, func(ctx context.Context, p reqParts) error {
		_, err := driver.RenderValues(ctx, &pb.RenderValuesRequest{Context: p.ctx, Spec: p.spec})
		return err
	}},
}

// malformed is one defect of a request: which RPCs it applies to (all of
// them when needs is 0; else the RPCs that take all of needs), how it is
// made, and what the message must name.
type malformed struct {
	name   string
	needs  takes
	mutate func(*reqParts)
	names  []string
}

const mib = 1 << 20

func worker(p *reqParts) *pb.NodeGroup { return p.spec.Nodegroups[1] }
func label(key, value string) func(*reqParts) {
	return func(p *reqParts) { p.spec.Cluster.Labels[key] = value }
}

// catalogue: every kind of malformed input the sidecar must refuse with
// InvalidArgument naming the field or label. Protobuf fields are typed, so
// "wrong types" reach the sidecar only as label strings; those are what the
// label rows test.
var catalogue = []malformed{
	// The spec every RPC takes.
	{"no spec", 0, func(p *reqParts) { p.spec = nil }, []string{"spec", "required"}},
	{"no cluster uuid", 0, func(p *reqParts) { p.spec.Cluster.Uuid = "" }, []string{"spec.cluster.uuid"}},
	{"blank cluster name", 0, func(p *reqParts) { p.spec.Cluster.Name = " \t" }, []string{"spec.cluster.name"}},
	{"no project", 0, func(p *reqParts) { p.spec.Cluster.ProjectId = "" }, []string{"spec.cluster.project_id"}},
	{"created_at not a time", 0, func(p *reqParts) { p.spec.Cluster.CreatedAt = "yesterday" }, []string{"spec.cluster.created_at", "yesterday"}},
	{"1 MiB cluster name", 0, func(p *reqParts) { p.spec.Cluster.Name = strings.Repeat("n", mib) }, []string{"spec.cluster.name", "at most"}},
	{"1 MiB label value", 0, label("availability_zone", strings.Repeat("z", mib)), []string{"spec.cluster.labels[availability_zone]", "at most"}},
	{"1 MiB label key", 0, label(strings.Repeat("k", mib), "v"), []string{"spec.cluster.labels", "at most"}},
	{"1 MiB template label", takesTemplate, func(p *reqParts) { p.spec.ClusterTemplate.Labels["kube_tag"] = strings.Repeat("v", mib) }, []string{"spec.cluster_template.labels[kube_tag]"}},
	{"60 KiB timestamp", 0, func(p *reqParts) { p.spec.Cluster.UpdatedAt = strings.Repeat("9", 60<<10) }, []string{"spec.cluster.updated_at", "61440 bytes"}},
	{"NUL in a label value", 0, label("availability_zone", "nova\x00"), []string{"spec.cluster.labels[availability_zone]", "NUL"}},
	{"too many labels", 0, func(p *reqParts) {
		for i := 0; i < 600; i++ {
			p.spec.Cluster.Labels["extra_"+strconv.Itoa(i)] = "x"
		}
	}, []string{"spec.cluster.labels", "entries"}},
	{"node group without uuid", 0, func(p *reqParts) { worker(p).Uuid = "" }, []string{"spec.nodegroups[1].uuid"}},
	{"node group uuid twice", 0, func(p *reqParts) { worker(p).Uuid = p.spec.Nodegroups[0].Uuid }, []string{"spec.nodegroups", "uuid"}},
	{"node group without role", 0, func(p *reqParts) { worker(p).Role = "" }, []string{"spec.nodegroups[1].role"}},
	{"negative node count", 0, func(p *reqParts) { worker(p).NodeCount = -3 }, []string{"spec.nodegroups[1].node_count", "-3"}},
	{"1 MiB node group name", 0, func(p *reqParts) { worker(p).Name = strings.Repeat("w", mib) }, []string{"spec.nodegroups[1].name"}},
	{"stack_id not a release name", 0, func(p *reqParts) { p.spec.Cluster.StackId = "../Etc/Passwd" }, []string{"spec.cluster.stack_id", "../Etc/Passwd"}},

	// The template.
	{"no template", takesTemplate, func(p *reqParts) { p.spec.ClusterTemplate = nil }, []string{"spec.cluster_template"}},
	{"template without image", takesTemplate, func(p *reqParts) { p.spec.ClusterTemplate.ImageId = "" }, []string{"spec.cluster_template.image_id"}},
	{"template chart version not semver", rendersLabels, func(p *reqParts) { p.spec.ClusterTemplate.Labels["capi_helm_chart_version"] = "latest" }, []string{"capi_helm_chart_version", "latest"}},

	// Labels with the wrong type.
	{"boolean label abc", rendersLabels, label("master_lb_floating_ip_enabled", "abc"), []string{"master_lb_floating_ip_enabled", "abc"}},
	{"integer label abc", rendersLabels, label("audit_log_max_age", "abc"), []string{"audit_log_max_age", "abc"}},
	{"60 KiB boolean label", rendersLabels, label("audit_log_enabled", strings.Repeat("y", 60<<10)), []string{"audit_log_enabled", "61440 bytes"}},
	{"integer label out of range", rendersLabels, label("boot_volume_size", "99999999"), []string{"boot_volume_size", "99999999"}},
	{"CIDR label not a CIDR", rendersLabels, label("fixed_subnet_cidr", "10.0.0.0/33"), []string{"fixed_subnet_cidr"}},
	// Unicode where only ASCII means anything: a full-width digit, a
	// boolean word with a check mark, a provider name with an ñ.
	{"integer label full-width digit", rendersLabels, label("boot_volume_size", "５０"), []string{"boot_volume_size", "５０"}},
	{"boolean label with a check mark", rendersLabels, label("auto_healing_enabled", "ja✓"), []string{"auto_healing_enabled", "ja✓"}},
	{"provider name with ñ", rendersLabels, label("octavia_provider", "ovñ"), []string{"octavia_provider", "ovñ"}},
	// YAML-looking values in labels the chart writes unquoted.
	{"YAML flow mapping", rendersLabels, label("availability_zone", "{a: b}"), []string{"availability_zone", "{a: b}"}},
	{"YAML sequence", rendersLabels, label("availability_zone", "- x"), []string{"availability_zone", "- x"}},
	{"YAML tag", rendersLabels, label("boot_volume_type", "!!binary"), []string{"boot_volume_type", "!!binary"}},
	{"YAML anchor", rendersLabels, label("boot_volume_type", "&anchor"), []string{"boot_volume_type", "&anchor"}},
	{"YAML boolean as a name", rendersLabels, label("availability_zone", "yes"), []string{"availability_zone", "yes"}},
	{"multi-line value", rendersLabels, label("availability_zone", "nova\nextra: injected"), []string{"availability_zone"}},
	{"template syntax in a value", rendersLabels, label("oidc_client_id", "{{ .Values.x }}"), []string{"oidc_client_id"}},
	{"node group label YAML", rendersLabels, func(p *reqParts) { worker(p).Labels = map[string]string{"availability_zone": "{a: b}"} }, []string{"availability_zone", "{a: b}"}},
	{"flavor YAML anchor", rendersLabels, func(p *reqParts) { worker(p).FlavorId = "&m1" }, []string{"flavor", "&m1"}},

	// Parts only some RPCs take.
	{"no token", takesToken, func(p *reqParts) { p.ctx = nil }, []string{"context.auth_token"}},
	{"no certificates", takesCerts, func(p *reqParts) { p.certs = nil }, []string{"certificates"}},
	{"CA certificate not PEM", takesCerts, func(p *reqParts) {
		p.certs = proto.Clone(p.certs).(*pb.CertificateAuthorities)
		p.certs.Ca.Certificate = "{a: b}"
	}, []string{"ca", "PEM"}},
	{"no node group named", takesNodeGroup, func(p *reqParts) { p.nodegroup = "" }, []string{"nodegroup_uuid"}},
	{"unknown node group", takesNodeGroup, func(p *reqParts) { p.nodegroup = "3f1c0d1e-0000-4000-8000-000000000000" }, []string{"nodegroup_uuid", "3f1c0d1e-0000-4000-8000-000000000000"}},
	{"negative resize", takesCount, func(p *reqParts) { p.count = -1 }, []string{"node_count", "-1"}},
	{"even control plane", takesCount, func(p *reqParts) { p.nodegroup = p.spec.Nodegroups[0].Uuid; p.count = 2 }, []string{"node_count", "odd"}},
}

// TestReliabilityMalformedRequests sends every malformed request of the
// catalogue to every RPC that takes that part: each is InvalidArgument
// naming the field or label, and nothing is applied anywhere (management
// clusters, Keystone). The mutating RPCs aim at a real CREATE_COMPLETE
// cluster, so "nothing applied" includes no new release revision of it.
//
// The cluster's display name is unicode on purpose: Magnum accepts any
// name, and the driver must accept it too and sanitize it into the
// stack_id (the release and object names), not refuse it.
func TestReliabilityMalformedRequests(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range rpcs {
		seen[r.name] = true
	}
	methods := pb.File_magnumcapi_v1_driver_proto.Services().ByName("DriverService").Methods()
	for i := 0; i < methods.Len(); i++ {
		if name := string(methods.Get(i).Name()); !seen[name] {
			t.Errorf("RPC %s is not in the malformed-request catalogue", name)
		}
	}

	c := newCluster(t, "Kühl-集群 ✓ prod", "v1.33.2", 1)
	stackID := c.create(t, driver)
	if !regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?-[a-z2-7]{12}$`).MatchString(stackID) || len(stackID) > 43 {
		t.Fatalf("stack_id %q from a unicode name: want a sanitized DNS label <name>-<12 base32>", stackID)
	}
	t.Logf("unicode name %q became stack_id %s", c.spec.Cluster.Name, stackID)
	c.waitOn(t, driver, "CREATE_COMPLETE", 3*time.Minute)
	ns := projectNamespace()
	revisions := statuses(history(t, stack.Env.Config, ns, stackID))

	// A second cluster Magnum is creating, never sent a valid request: the
	// CreateCluster rows use it, so a wrongly accepted create would show up
	// as its objects.
	fresh := newCluster(t, "never", "v1.33.2", 1)
	before := footprintOf(t, c.owner(), fresh.owner())
	for _, r := range rpcs {
		for _, m := range catalogue {
			if r.takes&m.needs != m.needs {
				continue
			}
			base := c
			if r.name == "CreateCluster" {
				base = fresh
			}
			p := reqParts{
				ctx: proto.Clone(base.ctx).(*pb.RequestContext), spec: proto.Clone(base.spec).(*pb.ClusterSpec),
				certs: base.certs, nodegroup: base.spec.Nodegroups[1].Uuid, count: 2,
			}
			// Empty maps do not survive a clone; the rows write into them.
			if p.spec.Cluster.Labels == nil {
				p.spec.Cluster.Labels = map[string]string{}
			}
			if p.spec.ClusterTemplate.Labels == nil {
				p.spec.ClusterTemplate.Labels = map[string]string{}
			}
			m.mutate(&p)
			ctx, cancel := callCtx()
			err := r.call(ctx, p)
			cancel()
			s, _ := status.FromError(err)
			msg := s.Message()
			if len(msg) > 300 {
				msg = msg[:300] + "…"
			}
			if s.Code() != codes.InvalidArgument {
				t.Errorf("%s / %s: %v %q, want InvalidArgument", r.name, m.name, s.Code(), msg)
				continue
			}
			for _, want := range m.names {
				if !strings.Contains(s.Message(), want) {
					t.Errorf("%s / %s: message %q does not name %q", r.name, m.name, msg, want)
				}
			}
			// A message quoting a 1 MiB value back is its own problem:
			// operators read these in Magnum's status_reason.
			if len(s.Message()) > 4096 {
				t.Errorf("%s / %s: message of %d bytes, want a short one", r.name, m.name, len(s.Message()))
			}
		}
	}

	if diff := before.changes(footprintOf(t, c.owner(), fresh.owner())); len(diff) > 0 {
		t.Errorf("the malformed requests changed the management clusters or Keystone:\n%s", strings.Join(diff, "\n"))
	}
	if after := statuses(history(t, stack.Env.Config, ns, stackID)); after != revisions {
		t.Errorf("release history %s after the catalogue, was %s", after, revisions)
	}

	c.remove(t, driver)
	if left := footprintOf(t, c.owner()).of(stackID, c.spec.Cluster.Uuid); len(left) > 0 {
		t.Errorf("left after DELETE_COMPLETE:\n%s", strings.Join(left, "\n"))
	}
}

// rawCodec sends and receives messages as already-encoded bytes, so a test
// can put on the wire what no protobuf library would encode.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) { return *(v.(*[]byte)), nil }
func (rawCodec) Unmarshal(data []byte, v any) error {
	*(v.(*[]byte)) = append([]byte(nil), data...)
	return nil
}
func (rawCodec) Name() string { return "proto" }

// TestReliabilityInvalidUTF8 puts a cluster name that is not UTF-8 on the
// wire. Neither Go's nor Python's protobuf encodes such a string (the shim
// cannot send one), so only a hand-made request carries it; grpc-go refuses
// it while decoding, before any handler or interceptor runs, with its own
// Internal "invalid UTF-8" (it has no hook to answer otherwise). What
// matters here: refused, the sidecar keeps serving, nothing applied.
func TestReliabilityInvalidUTF8(t *testing.T) {
	c := newCluster(t, "utf8", "v1.33.2", 1)
	before := footprintOf(t, c.owner())
	const placeholder = "PLACEHOLDER1"
	c.spec.Cluster.Name = placeholder
	for method, req := range map[string]proto.Message{
		"CreateCluster":    &pb.CreateClusterRequest{Context: c.ctx, Spec: c.spec, Certificates: c.certs},
		"GetClusterStatus": &pb.GetClusterStatusRequest{Spec: c.spec},
	} {
		wire, err := proto.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		// Same length, so every length prefix stays right.
		wire = bytes.Replace(wire, []byte(placeholder), []byte("bad\xff\xfenames\xff\xfe"), 1)
		var out []byte
		ctx, cancel := callCtx()
		err = conn.Invoke(ctx, "/"+pb.DriverService_ServiceDesc.ServiceName+"/"+method, &wire, &out, grpc.ForceCodec(rawCodec{}))
		cancel()
		if s, _ := status.FromError(err); s.Code() != codes.Internal || !strings.Contains(s.Message(), "invalid UTF-8") {
			t.Errorf("%s with a non-UTF-8 name: %v, want grpc-go's refusal (Internal, invalid UTF-8)", method, err)
		}
	}
	ctx, cancel := callCtx()
	_, err := driver.GetClusterStatus(ctx, &pb.GetClusterStatusRequest{Spec: newCluster(t, "after", "v1.33.2", 1).spec})
	cancel()
	if err != nil {
		t.Errorf("a valid request after the malformed ones: %v", err)
	}
	if diff := before.changes(footprintOf(t, c.owner())); len(diff) > 0 {
		t.Errorf("the non-UTF-8 requests changed the management clusters or Keystone:\n%s", strings.Join(diff, "\n"))
	}
}
