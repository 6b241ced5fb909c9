package pipeline

import (
	"runtime"
	"runtime/metrics"
	"sync"
)

// collectGrowth is how far the memory the heap holds from the operating
// system may grow between two reductions' ends before the second one
// collects.
const collectGrowth = 4 << 20

// heapWatch is the memory the heap held at the last reduction's end.
var heapWatch struct {
	mu   sync.Mutex
	last uint64
}

// collectIfGrown runs a garbage collection at a reduction's end when the
// heap took more memory from the operating system during it. A finished
// reduction's values are garbage, and collected now, before the next
// reduction allocates, their memory serves the next one; left to the
// pacer, the next reduction grows the heap first, into memory the
// process touches for the first time (a page fault every 4 KiB, costly in
// virtual machines), and a short run pays that for most of its
// reductions. Once the heap has the size the work needs it stops growing
// and no collection is forced: a long run pays nothing.
func collectIfGrown() {
	held := heapHeld()
	heapWatch.mu.Lock()
	grew := held > heapWatch.last+collectGrowth
	heapWatch.last = max(heapWatch.last, held)
	heapWatch.mu.Unlock()
	if grew {
		runtime.GC()
	}
}

// heapHeld is the memory the heap holds from the operating system and has
// not returned: its objects, free spans and unswept garbage.
func heapHeld() uint64 {
	s := []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"},
		{Name: "/memory/classes/heap/free:bytes"},
	}
	metrics.Read(s)
	total := uint64(0)
	for _, v := range s {
		if v.Value.Kind() == metrics.KindUint64 {
			total += v.Value.Uint64()
		}
	}
	return total
}
