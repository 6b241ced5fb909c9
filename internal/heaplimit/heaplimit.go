// Package heaplimit keeps a process's peak memory near what it holds live.
//
// A built-in backend runs in the process with the collector at
// backendplugin.BackendGCPercent, which lets the heap grow to three times
// what is live before a collection: cheap for the small runs that allocate
// a large kernel per call, but a run of many features at many rows, whose
// reductions allocate and drop their buffers feature after feature, then
// holds two to three times its live data. A soft limit
// (runtime/debug.SetMemoryLimit) of Floor, raised with the live heap to
// Growth times it, makes the collector run before the heap passes either:
// below the floor the collector's setting rules, and a process whose live
// heap exceeds the floor is never held under it (a fixed limit below the
// live heap would have the collector run back to back).
package heaplimit

import (
	"os"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

const (
	// Floor is the soft memory limit below which the collector's
	// setting rules.
	Floor = 768 << 20
	// Growth is the limit's multiple of the live heap above the floor.
	Growth = 1.5
	// Every is how often Follow reads the live heap.
	Every = 500 * time.Millisecond
)

// For is the soft memory limit for a live heap of live bytes.
func For(live uint64) int64 {
	return max(Floor, int64(Growth*float64(live)))
}

var once sync.Once

// Follow sets the soft memory limit to Floor and then, every Every for the
// life of the process, to For the live heap; unless GOMEMLIMIT is set,
// which is the user's limit. Calls after the first do nothing.
func Follow() {
	once.Do(func() {
		if os.Getenv("GOMEMLIMIT") != "" {
			return
		}
		debug.SetMemoryLimit(Floor)
		go follow()
	})
}

// follow sets the soft memory limit from the live heap every Every.
func follow() {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	for range time.Tick(Every) {
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return // not reported by this runtime
		}
		debug.SetMemoryLimit(For(sample[0].Value.Uint64()))
	}
}
