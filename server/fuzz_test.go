package server

import (
	"errors"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
)

// FuzzRequestChecks feeds arbitrary wire bytes to the checks CreateCluster
// runs before anything else, as a gRPC request would arrive from the shim.
// Bytes that decode either pass and convert to the domain's types without
// panicking, or are refused with InvalidArgument naming the request field
// (spec, context, certificates or a field of one) in a message short
// enough for Magnum's status_reason, whatever the input's size.
func FuzzRequestChecks(f *testing.F) {
	valid := validCreate()
	for _, m := range []func(*pb.CreateClusterRequest){
		func(*pb.CreateClusterRequest) {},
		func(r *pb.CreateClusterRequest) { r.Spec.Cluster.StackId = "Prod/x" },
		func(r *pb.CreateClusterRequest) {
			r.Spec.Cluster.Labels = map[string]string{"k": strings.Repeat("v", 70<<10)}
		},
		func(r *pb.CreateClusterRequest) { r.Spec.Nodegroups = append(r.Spec.Nodegroups, r.Spec.Nodegroups[0]) },
		func(r *pb.CreateClusterRequest) { r.Spec.Cluster.CreatedAt = "yesterday" },
		func(r *pb.CreateClusterRequest) { r.Context = nil },
	} {
		r := proto.Clone(valid).(*pb.CreateClusterRequest)
		m(r)
		data, err := proto.Marshal(r)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var req pb.CreateClusterRequest
		if proto.Unmarshal(data, &req) != nil {
			return
		}
		err := checkRequest(&req)
		if err == nil {
			_ = specFromProto(req.GetSpec())
			_ = authoritiesFromProto(req.GetCertificates())
			_ = callerFromProto(req.GetContext())
			return
		}
		var re *requestError
		st, _ := status.FromError(toStatus(err))
		switch {
		case !errors.As(err, &re):
			t.Fatalf("refused with %T %v, want a requestError", err, err)
		case st.Code() != codes.InvalidArgument:
			t.Fatalf("refused as %s, want InvalidArgument: %v", st.Code(), err)
		case !requestField(re.Field):
			t.Fatalf("the refusal names %q, not a request field", re.Field)
		case len(st.Message()) > 2048:
			t.Fatalf("the refusal's message is %d bytes long", len(st.Message()))
		}
	})
}

// requestField: field is one of CreateClusterRequest's, or a field of one.
func requestField(field string) bool {
	for _, top := range []string{"spec", "context", "certificates"} {
		if field == top || strings.HasPrefix(field, top+".") {
			return true
		}
	}
	return false
}
