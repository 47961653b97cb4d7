package server

import (
	"errors"
	"strings"
	"testing"

	"buf.build/go/protovalidate"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
)

func validSpec() *pb.ClusterSpec {
	return &pb.ClusterSpec{
		Cluster: &pb.Cluster{Uuid: "u", Name: "n", ProjectId: "p", CreatedAt: "2026-01-01T00:00:00Z", UpdatedAt: "2026-01-01T00:00:00Z",
			Labels: map[string]string{}},
		ClusterTemplate: &pb.ClusterTemplate{ImageId: "i"},
		Nodegroups: []*pb.NodeGroup{
			{Uuid: "m", Name: "default-master", Role: "master", NodeCount: 1},
			{Uuid: "w", Name: "default-worker", Role: "worker", NodeCount: 2},
		},
	}
}

func validCreate() *pb.CreateClusterRequest {
	return &pb.CreateClusterRequest{Context: &pb.RequestContext{AuthToken: "token"}, Spec: validSpec(), Certificates: &pb.CertificateAuthorities{}}
}

// TestCheckRequestRefuses: each rule of proto/ refuses with InvalidArgument,
// naming the field, showing the value (its size when secret or long) and
// the rule, in a message short enough for Magnum's status_reason however
// large the input.
func TestCheckRequestRefuses(t *testing.T) {
	huge := strings.Repeat("k", 1<<20)
	create := func(m func(*pb.CreateClusterRequest)) proto.Message { r := validCreate(); m(r); return r }
	spec := func(m func(*pb.ClusterSpec)) proto.Message {
		return create(func(r *pb.CreateClusterRequest) { m(r.Spec) })
	}
	resize := func(uuid string, count int32, remove int) proto.Message {
		return &pb.ResizeClusterRequest{Spec: validSpec(), NodegroupUuid: uuid, NodeCount: count, NodesToRemove: make([]string, remove)}
	}
	for _, tc := range []struct {
		name       string
		req        proto.Message
		want, shun string // want: the message's start; shun: what it must not show
	}{
		{"no spec", &pb.GetClusterStatusRequest{}, "spec: got nothing: value is required", ""},
		{"no cluster", spec(func(s *pb.ClusterSpec) { s.Cluster = nil }), "spec.cluster: got nothing", ""},
		{"blank uuid", spec(func(s *pb.ClusterSpec) { s.Cluster.Uuid = " \t" }), `spec.cluster.uuid: got " \t": must not be blank`, ""},
		{"blank name", spec(func(s *pb.ClusterSpec) { s.Cluster.Name = "" }), `spec.cluster.name: got "": must not be blank`, ""},
		{"blank project", spec(func(s *pb.ClusterSpec) { s.Cluster.ProjectId = "\u00a0" }), "spec.cluster.project_id: ", ""},
		{"stack_id with a slash", spec(func(s *pb.ClusterSpec) { s.Cluster.StackId = "../etc" }), `spec.cluster.stack_id: got "../etc": must be empty or the release name`, ""},
		{"stack_id uppercase", spec(func(s *pb.ClusterSpec) { s.Cluster.StackId = "Prod-abcdefghijkl" }), "spec.cluster.stack_id: ", ""},
		{"stack_id too long", spec(func(s *pb.ClusterSpec) { s.Cluster.StackId = strings.Repeat("a", 44) }), "spec.cluster.stack_id: ", ""},
		{"huge label key", spec(func(s *pb.ClusterSpec) { s.Cluster.Labels[huge] = "v" }), "spec.cluster.labels[kkk", huge[:100]},
		{"huge label value", spec(func(s *pb.ClusterSpec) { s.Cluster.Labels["k"] = huge }), "spec.cluster.labels[k]: got <1048576 bytes>: must be at most 65536 bytes", ""},
		{"NUL in a label", spec(func(s *pb.ClusterSpec) { s.Cluster.Labels["k"] = "a\x00b" }), `spec.cluster.labels[k]: got "a\x00b": contains substring ` + "`NUL`", "\x00"},
		{"too many labels", spec(func(s *pb.ClusterSpec) {
			for i := range 513 {
				s.Cluster.Labels[strings.Repeat("l", i+1)] = ""
			}
		}), "spec.cluster.labels: got 513 entries: ", ""},
		{"huge template field", spec(func(s *pb.ClusterSpec) { s.ClusterTemplate.NoProxy = huge }), "spec.cluster_template.no_proxy: got <1048576 bytes>", ""},
		{"huge timestamp", spec(func(s *pb.ClusterSpec) { s.Cluster.CreatedAt = strings.Repeat("x", 60<<10) }), "spec.cluster.created_at: got <61440 bytes>: must be an RFC 3339 timestamp", ""},
		{"bad timestamp", spec(func(s *pb.ClusterSpec) { s.Cluster.UpdatedAt = "2026-02-30T00:00:00" }), `spec.cluster.updated_at: got "2026-02-30T00:00:00"`, ""},
		{"no template", spec(func(s *pb.ClusterSpec) { s.ClusterTemplate = nil }), "spec.cluster_template: got nothing: the cluster's template is required", ""},
		{"blank image", spec(func(s *pb.ClusterSpec) { s.ClusterTemplate.ImageId = " " }), `spec.cluster_template.image_id: got " ": must not be blank`, ""},
		{"too many node groups", spec(func(s *pb.ClusterSpec) { s.Nodegroups = make([]*pb.NodeGroup, 257) }), "spec.nodegroups: got 257 items", ""},
		{"duplicate node group", spec(func(s *pb.ClusterSpec) { s.Nodegroups[1].Uuid = "m" }), "spec.nodegroups: got 2 items: must give each node group a uuid", ""},
		{"blank node group role", spec(func(s *pb.ClusterSpec) { s.Nodegroups[1].Role = "" }), `spec.nodegroups[1].role: got "": must not be blank`, ""},
		{"negative node count", spec(func(s *pb.ClusterSpec) { s.Nodegroups[1].NodeCount = -1 }), "spec.nodegroups[1].node_count: got -1: ", ""},
		{"huge node count", spec(func(s *pb.ClusterSpec) { s.Nodegroups[1].NodeCount = 10001 }), "spec.nodegroups[1].node_count: got 10001: ", ""},
		{"too many taints", spec(func(s *pb.ClusterSpec) { s.Nodegroups[1].NodeTaints = make([]*pb.NodeGroupTaint, 513) }), "spec.nodegroups[1].node_taints: got 513 items", ""},
		{"no token", create(func(r *pb.CreateClusterRequest) { r.Context.AuthToken = "" }), "context.auth_token: got <0 bytes>: the caller's Keystone token is required", ""},
		{"no context", create(func(r *pb.CreateClusterRequest) { r.Context = nil }), "context.auth_token: got <0 bytes>: the caller's Keystone token is required", ""},
		{"secret NUL", create(func(r *pb.CreateClusterRequest) { r.Context.AuthToken = "sec\x00ret" }), "context.auth_token: got <7 bytes>: ", "sec"},
		{"no certificates", create(func(r *pb.CreateClusterRequest) { r.Certificates = nil }), "certificates: got nothing: value is required", ""},
		{"huge private key", create(func(r *pb.CreateClusterRequest) { r.Certificates.Ca = &pb.KeyPair{PrivateKey: huge} }), "certificates.ca.private_key: got <1048576 bytes>", "kkk"},
		{"no token to rotate", &pb.RotateCredentialRequest{Spec: validSpec()}, "context.auth_token: got <0 bytes>", ""},
		{"resize unknown group", resize("x", 1, 0), `nodegroup_uuid: got "x": must be the uuid of one of spec.nodegroups`, ""},
		{"resize no group", resize("", 1, 0), `nodegroup_uuid: got "": must be the uuid`, ""},
		{"resize to -1", resize("w", -1, 0), "node_count: got -1: ", ""},
		{"resize over the bound", resize("w", 10001, 0), "node_count: got 10001: ", ""},
		{"resize to an even control plane", resize("m", 2, 0), "node_count: got 2: must be an odd number of control plane nodes", ""},
		{"resize to no control plane", resize("m", 0, 0), "node_count: got 0: must be an odd number", ""},
		{"remove too many", resize("w", 1, 513), "nodes_to_remove: got 513 items: ", ""},
		{"upgrade unknown group", &pb.UpgradeClusterRequest{Spec: validSpec(), NodegroupUuid: "x"}, `nodegroup_uuid: got "x": must be the uuid`, ""},
		{"node group unknown", &pb.UpdateNodeGroupRequest{Spec: validSpec(), NodegroupUuid: "x"}, `nodegroup_uuid: got "x": must be the uuid`, ""},
		{"node group is the control plane", &pb.DeleteNodeGroupRequest{Spec: validSpec(), NodegroupUuid: "m"}, `nodegroup_uuid: got "m": must be a worker node group`, ""},
		{"a field before the request's rules", &pb.UpdateNodeGroupRequest{Spec: func() *pb.ClusterSpec { s := validSpec(); s.Nodegroups[1].Uuid = ""; return s }(), NodegroupUuid: "w"}, `spec.nodegroups[1].uuid: got "": must not be blank`, ""},
		{"no spec, a node group named", &pb.UpdateNodeGroupRequest{NodegroupUuid: "w"}, "spec: got nothing: value is required", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkRequest(tc.req)
			var re *requestError
			if !errors.As(err, &re) || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("error %.300q, want a requestError starting %q", err, tc.want)
			}
			st, _ := status.FromError(toStatus(err))
			if st.Code() != codes.InvalidArgument || len(st.Message()) > 512 {
				t.Errorf("refused as %s with %d bytes, want InvalidArgument, clipped", st.Code(), len(st.Message()))
			}
			if tc.shun != "" && strings.Contains(err.Error(), tc.shun) {
				t.Errorf("error %.300q shows %.20q", err, tc.shun)
			}
		})
	}
}

// TestCheckRequestAccepts: what Magnum sends passes, for every operation.
func TestCheckRequestAccepts(t *testing.T) {
	spec := validSpec()
	for _, tc := range []struct {
		name string
		req  proto.Message
	}{
		{"create", validCreate()},
		{"status without template", &pb.GetClusterStatusRequest{Spec: &pb.ClusterSpec{Cluster: spec.Cluster}}},
		{"resize a worker to 0", &pb.ResizeClusterRequest{Spec: spec, NodegroupUuid: "w", NodeCount: 0, NodesToRemove: []string{"n1"}}},
		{"resize the control plane to 3", &pb.ResizeClusterRequest{Spec: spec, NodegroupUuid: "m", NodeCount: 3}},
		{"upgrade the whole cluster", &pb.UpgradeClusterRequest{Spec: spec}},
		{"upgrade one group", &pb.UpgradeClusterRequest{Spec: spec, NodegroupUuid: "w"}},
		{"update a worker group", &pb.UpdateNodeGroupRequest{Spec: spec, NodegroupUuid: "w"}},
		{"rotate the credential", &pb.RotateCredentialRequest{Context: &pb.RequestContext{AuthToken: "t"}, Spec: spec}},
		{"Magnum's timestamps", &pb.DeleteClusterRequest{Spec: &pb.ClusterSpec{Cluster: &pb.Cluster{Uuid: "u", Name: "n", ProjectId: "p",
			CreatedAt: "2026-01-01 10:00:00.123456", UpdatedAt: "2026-01-01T10:00:00"}}}},
		// What ReleaseName makes, and an adopted StackHPC stack_id.
		{"stack_id", &pb.GetClusterHealthRequest{Spec: &pb.ClusterSpec{Cluster: &pb.Cluster{Uuid: "u", Name: "n", ProjectId: "p", StackId: "k-hl-prod-2iggmkze5vjt"}}}},
		{"stack_id of 43", &pb.GetClusterHealthRequest{Spec: &pb.ClusterSpec{Cluster: &pb.Cluster{Uuid: "u", Name: "n", ProjectId: "p", StackId: "my-cluster-name-that-is-thirty-abcdefghijkl"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := checkRequest(tc.req); err != nil {
				t.Errorf("refused: %v", err)
			}
		})
	}
}

// BenchmarkCheckRequest is the per-request cost of the checks, on a create
// request of Magnum's usual size (docs/benchmarks.md).
func BenchmarkCheckRequest(b *testing.B) {
	req := benchmarkCreate()
	if err := checkRequest(req); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = checkRequest(req)
	}
}

// benchmarkCreate: a create with 40 cluster and template labels and three
// node groups, as a real cluster carries.
func benchmarkCreate() *pb.CreateClusterRequest {
	req := validCreate()
	req.Certificates = &pb.CertificateAuthorities{Ca: &pb.KeyPair{Certificate: strings.Repeat("c", 1200), PrivateKey: strings.Repeat("k", 1700)}}
	req.Spec.ClusterTemplate.Labels = map[string]string{}
	for i := range 40 {
		k := "label_" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + string(rune('a'+i/26))
		req.Spec.Cluster.Labels[k], req.Spec.ClusterTemplate.Labels[k] = "value-"+k, "value-"+k
	}
	req.Spec.Nodegroups = append(req.Spec.Nodegroups, &pb.NodeGroup{Uuid: "g", Name: "gpu", Role: "worker", NodeCount: 3, Labels: map[string]string{"a": "b"}})
	return req
}

// TestEveryRequestFieldIsBounded: every string, list and map a request can
// carry has a bound in proto/, so a field added without one fails here
// instead of letting a request make the sidecar allocate without bound.
func TestEveryRequestFieldIsBounded(t *testing.T) {
	seen := map[protoreflect.FullName]bool{}
	var walk func(md protoreflect.MessageDescriptor)
	walk = func(md protoreflect.MessageDescriptor) {
		if seen[md.FullName()] {
			return
		}
		seen[md.FullName()] = true
		for i := range md.Fields().Len() {
			fd := md.Fields().Get(i)
			rules, err := protovalidate.ResolveFieldRules(fd)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case fd.IsMap():
				if !rules.GetMap().HasMaxPairs() || !rules.GetMap().GetKeys().GetString().HasMaxBytes() ||
					(fd.MapValue().Kind() == protoreflect.StringKind && !rules.GetMap().GetValues().GetString().HasMaxBytes()) {
					t.Errorf("%s: a map without max_pairs or bounded strings", fd.FullName())
				}
			case fd.IsList():
				if !rules.GetRepeated().HasMaxItems() || (fd.Kind() == protoreflect.StringKind && !rules.GetRepeated().GetItems().GetString().HasMaxBytes()) {
					t.Errorf("%s: a list without max_items or bounded strings", fd.FullName())
				}
			case fd.Kind() == protoreflect.StringKind && !rules.GetString().HasMaxBytes():
				t.Errorf("%s: a string without max_bytes", fd.FullName())
			}
			if fd.Message() != nil && !fd.IsMap() {
				walk(fd.Message())
			}
		}
	}
	services := pb.File_magnumcapi_v1_driver_proto.Services()
	for i := range services.Len() {
		for j := range services.Get(i).Methods().Len() {
			walk(services.Get(i).Methods().Get(j).Input())
		}
	}
	if len(seen) < 10 {
		t.Fatalf("walked %d messages, want every request's", len(seen))
	}
}
