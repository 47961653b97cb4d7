package magnum

import (
	"slices"
	"sync"
	"testing"
)

// TestLaneSlotsLongestFirst: with every lane waiting, the slots go out by
// priority, two at a time; with go test's -parallel below the number of
// lanes they go out in any order, and none waits for ever.
func TestLaneSlotsLongestFirst(t *testing.T) {
	tests := []struct {
		name    string
		slots   int
		inOrder bool
		want    []string // the order they get a slot
	}{
		{"one slot, every lane waits here", 1, true, []string{"a", "b", "c", "d"}},
		{"two slots, every lane waits here", 2, true, []string{"a", "b", "c", "d"}},
		{"go test holds some lanes", 2, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newLaneSlots(tt.slots, "a", "b", "c", "d")
			for _, n := range []string{"d", "c", "b", "a"} {
				s.register(n)
			}
			s.inOrder = tt.inOrder
			var wg sync.WaitGroup
			gate := make(chan struct{})
			for _, n := range []string{"d", "c", "b", "a"} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-gate
					s.acquire(n)()
				}()
			}
			close(gate)
			wg.Wait()
			if len(s.started) != 4 {
				t.Fatalf("started %v, want all four", s.started)
			}
			if tt.want != nil && !slices.Equal(s.started, tt.want) {
				t.Errorf("started %v, want %v", s.started, tt.want)
			}
		})
	}
}
