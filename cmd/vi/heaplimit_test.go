package main

import "testing"

// TestHeapLimitFor: the soft limit is the floor for a small live heap and
// one and a half times a large one, never below the live heap.
func TestHeapLimitFor(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int64
	}{
		{0, heapLimitFloor},
		{400 << 20, heapLimitFloor},
		{512 << 20, heapLimitFloor},
		{1 << 30, 3 << 29},
		{4 << 30, 6 << 30},
	} {
		got := heapLimitFor(c.live)
		if got != c.want || got < int64(c.live) {
			t.Errorf("heapLimitFor(%d) = %d, want %d", c.live, got, c.want)
		}
	}
}
