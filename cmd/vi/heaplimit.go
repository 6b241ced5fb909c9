package main

import (
	"os"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// The heap limit keeps vi's peak memory near what a run holds. A built-in
// backend runs in vi's own process with the collector at its
// backendGCPercent, which lets the heap grow to three times what is live
// before a collection: cheap for the small runs that allocate a large
// kernel per call, but a run of many features at many rows, whose
// reductions allocate and drop their buffers feature after feature, then
// holds two to three times its live data. A soft limit
// (runtime/debug.SetMemoryLimit) of heapLimitFloor, raised with the live
// heap to heapLimitGrowth times it, makes the collector run before the
// heap passes either: below the floor the backend's setting rules, and a
// run whose live heap exceeds the floor is never held under it (a fixed
// limit below the live heap would have the collector run back to back).
const (
	heapLimitFloor  = 768 << 20
	heapLimitGrowth = 1.5
	heapLimitEvery  = 500 * time.Millisecond
)

// heapLimitFor is the soft memory limit for a live heap of live bytes.
func heapLimitFor(live uint64) int64 {
	return max(heapLimitFloor, int64(heapLimitGrowth*float64(live)))
}

func init() {
	if os.Getenv("GOMEMLIMIT") != "" {
		return // the user's limit
	}
	debug.SetMemoryLimit(heapLimitFloor)
	go followHeap()
}

// followHeap sets the soft memory limit from the live heap every
// heapLimitEvery, for the life of the process.
func followHeap() {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	for range time.Tick(heapLimitEvery) {
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return // not reported by this runtime
		}
		debug.SetMemoryLimit(heapLimitFor(sample[0].Value.Uint64()))
	}
}
