package magnum

import (
	"flag"
	"slices"
	"strconv"
	"sync"
	"testing"
)

// laneSlots runs at most two lanes at once (three at once next to the rest
// of the stack overload a two-core machine) and hands a free slot to the
// longest lane waiting: longest first, the two slots finish close together
// (Magnum 20 then the demo beside Magnum 15 then 23), instead of the order
// in which go test happens to wake its parallel subtests, which once left
// Magnum 20's lane running alone at the end.
type laneSlots struct {
	mu       sync.Mutex
	changed  *sync.Cond
	free     int
	waiting  []string // registered lanes not started yet
	inOrder  bool     // go test's -parallel lets every registered lane wait here
	priority []string // longest first
	started  []string // in the order they got a slot
}

// slots: Magnum 20's lane is the longest (CA rotation and the admin's
// update wait longest there), the demo the shortest.
var slots = newLaneSlots(2, "magnum20", "magnum15", "magnum23", "magnum15demo")

func newLaneSlots(n int, priority ...string) *laneSlots {
	s := &laneSlots{free: n, priority: priority}
	s.changed = sync.NewCond(&s.mu)
	return s
}

// register is called before t.Parallel, so by the time the parallel phase
// begins every lane the -run pattern selected has registered.
func (s *laneSlots) register(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.waiting = append(s.waiting, name)
	// Lanes wait for their turn here only when go test lets them all into
	// the parallel phase at once; with fewer of go test's own slots than
	// lanes, a lane holding one could wait for a lane that has none.
	s.inOrder = goTestParallel() >= len(s.waiting)
}

// acquire blocks until name may start, and returns the release of its slot.
func (s *laneSlots) acquire(name string) (release func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.free == 0 || (s.inOrder && s.next() != name) {
		s.changed.Wait()
	}
	s.free--
	s.started = append(s.started, name)
	s.waiting = slices.DeleteFunc(s.waiting, func(w string) bool { return w == name })
	s.changed.Broadcast()
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.free++
		s.changed.Broadcast()
	}
}

// next is the waiting lane of highest priority.
func (s *laneSlots) next() string {
	for _, p := range s.priority {
		if slices.Contains(s.waiting, p) {
			return p
		}
	}
	if len(s.waiting) > 0 {
		return s.waiting[0]
	}
	return ""
}

// goTestParallel is go test's -parallel (GOMAXPROCS unless given).
func goTestParallel() int {
	f := flag.Lookup("test.parallel")
	if f == nil {
		return 1
	}
	n, err := strconv.Atoi(f.Value.String())
	if err != nil {
		return 1
	}
	return n
}

// inLaneSlot registers t's lane, makes t parallel and waits for its slot.
func inLaneSlot(t *testing.T, name string) {
	t.Helper()
	slots.register(name)
	t.Parallel()
	t.Cleanup(slots.acquire(name))
}
