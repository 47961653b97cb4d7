package server

import (
	"errors"
	"strings"
	"testing"

	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
)

func validSpec() *pb.ClusterSpec {
	return &pb.ClusterSpec{
		Cluster: &pb.Cluster{Uuid: "u", Name: "n", ProjectId: "p", CreatedAt: "2026-01-01T00:00:00Z", UpdatedAt: "2026-01-01T00:00:00Z",
			Labels: map[string]string{}},
		ClusterTemplate: &pb.ClusterTemplate{ImageId: "i"},
	}
}

// TestValidateNamesFieldBriefly: malformed requests are refused naming the
// field, and the message stays short however large the input was (it ends
// up in Magnum's status_reason).
func TestValidateNamesFieldBriefly(t *testing.T) {
	huge := strings.Repeat("k", 1<<20)
	for _, tc := range []struct {
		name   string
		mutate func(*pb.ClusterSpec)
		field  string
	}{
		{"stack_id with a slash", func(s *pb.ClusterSpec) { s.Cluster.StackId = "../etc" }, "spec.cluster.stack_id"},
		{"stack_id uppercase", func(s *pb.ClusterSpec) { s.Cluster.StackId = "Prod-abcdefghijkl" }, "spec.cluster.stack_id"},
		{"stack_id too long", func(s *pb.ClusterSpec) { s.Cluster.StackId = strings.Repeat("a", 44) }, "spec.cluster.stack_id"},
		{"huge label key", func(s *pb.ClusterSpec) { s.Cluster.Labels[huge] = "v" }, "spec.cluster.labels[kkk"},
		{"huge timestamp", func(s *pb.ClusterSpec) { s.Cluster.CreatedAt = strings.Repeat("x", 60<<10) }, "spec.cluster.created_at"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := validSpec()
			tc.mutate(s)
			err := firstError(checkBounds(&pb.RenderValuesRequest{Spec: s}), checkSpec(s, true))
			var re *requestError
			if !errors.As(err, &re) || !strings.HasPrefix(err.Error(), tc.field) {
				t.Fatalf("error %.200q, want a requestError naming %s", err, tc.field)
			}
			if n := len(err.Error()); n > 512 {
				t.Errorf("message of %d bytes, want it clipped", n)
			}
		})
	}
	// What ReleaseName makes, and an adopted StackHPC stack_id, pass.
	for _, id := range []string{"", "k-hl-prod-2iggmkze5vjt", "my-cluster-name-that-is-thirty-abcdefghijkl"} {
		s := validSpec()
		s.Cluster.StackId = id
		if err := checkSpec(s, true); err != nil {
			t.Errorf("stack_id %q: %v", id, err)
		}
	}
}
