package server

import (
	"testing"

	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
)

// Requests checkRequest accepts must convert without panicking: status and
// health requests may leave the template out.
func TestSpecFromProtoOptionalParts(t *testing.T) {
	for name, spec := range map[string]*pb.ClusterSpec{
		"no template":    {Cluster: &pb.Cluster{Uuid: "u", Name: "n", ProjectId: "p"}},
		"no node groups": {Cluster: &pb.Cluster{Uuid: "u", Name: "n", ProjectId: "p"}, ClusterTemplate: &pb.ClusterTemplate{ImageId: "i"}},
	} {
		t.Run(name, func(t *testing.T) {
			if err := checkRequest(&pb.GetClusterStatusRequest{Spec: spec}); err != nil {
				t.Fatalf("checkRequest: %v", err)
			}
			got := specFromProto(spec)
			if got.Cluster.UUID != "u" {
				t.Errorf("cluster uuid = %q, want u", got.Cluster.UUID)
			}
			if want := spec.GetClusterTemplate().GetImageId(); got.Template.ImageID != want {
				t.Errorf("template image = %q, want %q", got.Template.ImageID, want)
			}
		})
	}
}
