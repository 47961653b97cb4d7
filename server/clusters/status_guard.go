package clusters

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/magnum-capi/magnum-capi/server/watchcache"
)

// deployed remembers, per release, the newest revision this process wrote and
// not yet seen in the watch cache. Until the cache shows that revision, and
// every object of the cluster as the API server held it after the write (a
// watchcache.Barrier), its objects may still be the previous, fully rolled-out
// ones, and a status derived from them would report an update complete
// before it began.
//
// This guards the sidecar's own writes. A status poll that reaches another
// sidecar replica is guarded only by the stale objects' own
// observedGeneration checks in capistatus.
type deployed struct {
	mu      sync.Mutex
	pending map[string]*pendingDeploy
}

type pendingDeploy struct {
	revision int
	// barrier is taken at the first status poll that would report the
	// operation complete: any moment after the write will do, and polls
	// that report progress need no API request.
	barrier *watchcache.Barrier
}

func (s *Service) rememberDeployed(stackID string, revision int) {
	s.deployed.mu.Lock()
	defer s.deployed.mu.Unlock()
	if s.deployed.pending == nil {
		s.deployed.pending = map[string]*pendingDeploy{}
	}
	if p := s.deployed.pending[stackID]; p == nil || revision > p.revision {
		s.deployed.pending[stackID] = &pendingDeploy{revision: revision}
	}
}

func (s *Service) forgetDeployed(stackID string) {
	s.deployed.mu.Lock()
	defer s.deployed.mu.Unlock()
	delete(s.deployed.pending, stackID)
}

// pendingRevision is the revision the cache must show before an answer may
// rely on it; 0 when nothing is pending. Deletion needs no guard: it is
// complete only when the objects are gone.
func (s *Service) pendingRevision(spec Spec) int {
	if strings.HasPrefix(spec.Cluster.Status, "DELETE_") {
		return 0
	}
	s.deployed.mu.Lock()
	defer s.deployed.mu.Unlock()
	if p := s.deployed.pending[spec.Cluster.StackID]; p != nil {
		return p.revision
	}
	return 0
}

// revisionBehind says what the status still waits for when the cache has not
// seen our last release revision; "" when it has (or nothing is pending).
func (s *Service) revisionBehind(spec Spec, rec watchcache.ReleaseRecord) string {
	want := s.pendingRevision(spec)
	if want == 0 || (rec.Revision >= want && rec.Status == "deployed") {
		return ""
	}
	return fmt.Sprintf("the watch cache to observe release revision %d (it has %d, %s)", want, rec.Revision, rec.Status)
}

// cacheBehind says what the status still waits for when the cache has not
// caught up with our last write; "" when it has, and then the write is
// forgotten, so later polls cost nothing. Taking the barrier lists the
// cluster's objects once; if that fails, the poll reports waiting and the
// next one tries again.
func (s *Service) cacheBehind(ctx context.Context, op *operation, rec watchcache.ReleaseRecord) string {
	spec := op.spec
	if behind := s.revisionBehind(spec, rec); behind != "" {
		return behind
	}
	stackID := spec.Cluster.StackID
	if strings.HasPrefix(spec.Cluster.Status, "DELETE_") {
		return ""
	}
	s.deployed.mu.Lock()
	p := s.deployed.pending[stackID]
	var b *watchcache.Barrier
	if p != nil {
		b = p.barrier
	}
	s.deployed.mu.Unlock()
	if p == nil {
		return ""
	}
	if b == nil {
		var err error
		if b, err = op.mc.Cache.TakeBarrier(ctx, op.ns, stackID); err != nil {
			s.log.WarnContext(ctx, "read-your-writes barrier", "stack_id", stackID, "err", err)
			return fmt.Sprintf("the watch cache to catch up with release revision %d", p.revision)
		}
		s.deployed.mu.Lock()
		if cur := s.deployed.pending[stackID]; cur == p {
			p.barrier = b
		}
		s.deployed.mu.Unlock()
	}
	if lagging := op.mc.Cache.Behind(b); lagging != "" {
		return "the watch cache to observe " + lagging
	}
	s.deployed.mu.Lock()
	if s.deployed.pending[stackID] == p {
		delete(s.deployed.pending, stackID)
	}
	s.deployed.mu.Unlock()
	return ""
}
