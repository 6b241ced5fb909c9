// Package parallel runs a loop's iterations on a bounded number of
// goroutines.
package parallel

import (
	"sync"
	"sync/atomic"
)

// For runs f(w, i) for i = 0, ..., count-1 on up to workers goroutines, w
// numbering the goroutine (0 <= w < workers; each i on one of them, taken
// in order as goroutines come free). With one worker or one iteration it
// runs them on the caller's goroutine.
func For(workers, count int, f func(w, i int)) {
	if workers <= 1 || count <= 1 {
		for i := range count {
			f(0, i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range min(workers, count) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= count {
					return
				}
				f(w, i)
			}
		}()
	}
	wg.Wait()
}
