package parallel

import (
	"sync"
	"testing"
)

// For runs every iteration once, on goroutine numbers below the workers
// asked for (and below the count), whatever the two.
func TestFor(t *testing.T) {
	for _, workers := range []int{0, 1, 2, 5} {
		for _, count := range []int{0, 1, 3, 17} {
			var mu sync.Mutex
			seen := make([]int, count)
			maxW := -1
			For(workers, count, func(w, i int) {
				mu.Lock()
				defer mu.Unlock()
				seen[i]++
				maxW = max(maxW, w)
			})
			for i, n := range seen {
				if n != 1 {
					t.Fatalf("workers %d count %d: iteration %d ran %d times", workers, count, i, n)
				}
			}
			if limit := max(1, min(workers, count)); maxW >= limit {
				t.Fatalf("workers %d count %d: goroutine %d, want below %d", workers, count, maxW, limit)
			}
		}
	}
}
