package heaplimit

import "testing"

// TestFor: the soft limit is the floor for a small live heap and one and a
// half times a large one, never below the live heap.
func TestFor(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int64
	}{
		{0, Floor},
		{400 << 20, Floor},
		{512 << 20, Floor},
		{1 << 30, 3 << 29},
		{4 << 30, 6 << 30},
	} {
		got := For(c.live)
		if got != c.want || got < int64(c.live) {
			t.Errorf("For(%d) = %d, want %d", c.live, got, c.want)
		}
	}
}
