package pipeline

import (
	"runtime"
	"runtime/debug"
	"testing"
)

var collectSink []float64

// A reduction's end collects when the heap grew past the most it held at
// an earlier end by more than collectGrowth, and not otherwise.
func TestCollectIfGrown(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1)) // no collection but the forced ones
	heapWatch.mu.Lock()
	heapWatch.last = heapHeld()
	heapWatch.mu.Unlock()
	collections := func() uint32 {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.NumGC
	}
	before := collections()
	collectIfGrown()
	if got := collections(); got != before {
		t.Fatalf("%d collections with the heap as it was", got-before)
	}
	// More than the heap holds: it must take new memory.
	grow := heapHeld() + 4*collectGrowth
	collectSink = make([]float64, grow/8)
	collectSink = nil
	collectIfGrown()
	if got := collections(); got != before+1 {
		t.Fatalf("%d collections after the heap grew by %d bytes, want 1", got-before, grow)
	}
	collectIfGrown()
	if got := collections(); got != before+1 {
		t.Fatalf("a second collection without more growth")
	}
}
