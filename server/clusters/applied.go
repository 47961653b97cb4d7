package clusters

import (
	"fmt"
	"strings"
	"sync"

	"github.com/magnum-capi/magnum-capi/server/kube"
)

// applied remembers, per release, the newest revision this process wrote.
// The watch cache sees Helm's release Secret after the objects of that
// revision in practice, so until the cache shows at least that revision its
// objects may still be the previous, fully rolled-out ones, and a status
// derived from them would report an update complete before it began.
type applied struct {
	mu        sync.Mutex
	revisions map[string]int
}

func (s *Service) rememberApplied(stackID string, revision int) {
	s.applied.mu.Lock()
	defer s.applied.mu.Unlock()
	if s.applied.revisions == nil {
		s.applied.revisions = map[string]int{}
	}
	if revision > s.applied.revisions[stackID] {
		s.applied.revisions[stackID] = revision
	}
}

func (s *Service) forgetApplied(stackID string) {
	s.applied.mu.Lock()
	defer s.applied.mu.Unlock()
	delete(s.applied.revisions, stackID)
}

// cacheBehind says what the status is still waiting for when the cache has
// not caught up with our last write; "" when it has.
func (s *Service) cacheBehind(spec Spec, rec kube.ReleaseRecord) string {
	s.applied.mu.Lock()
	want := s.applied.revisions[spec.Cluster.StackID]
	s.applied.mu.Unlock()
	if want == 0 || strings.HasPrefix(spec.Cluster.Status, "DELETE_") {
		return ""
	}
	if rec.Revision >= want && rec.Status == "deployed" {
		return ""
	}
	return fmt.Sprintf("waiting for the watch cache to observe release revision %d (it has %d, %s)", want, rec.Revision, rec.Status)
}
