package scratch

import (
	"runtime"
	"testing"
	"time"
)

// A buffer put back is handed out again for a need it fits (not one less
// than half its size), at most GOMAXPROCS are kept (those put back
// longest ago go first), and all go after the idle time without a Get.
func TestList(t *testing.T) {
	l := New[float64](50 * time.Millisecond)
	if b := l.Get(10); b != nil {
		t.Fatalf("empty list: got a buffer of %d", len(b))
	}
	if b := l.Take(10); len(b) != 10 {
		t.Fatalf("empty list: Take(10) gave %d values", len(b))
	}
	b := make([]float64, 100)
	l.Put(b)
	if got := l.Get(200); got != nil {
		t.Fatalf("a buffer of 100 for 200 values")
	}
	if got := l.Get(40); got != nil {
		t.Fatalf("a buffer of 100 for 40 values (more than twice the need)")
	}
	got := l.Get(60)
	if len(got) != 60 || &got[0] != &b[0] {
		t.Fatalf("Get(60) = %d values, not the buffer put back", len(got))
	}
	if l.Len() != 0 {
		t.Fatalf("the buffer handed out is still listed")
	}
	procs := runtime.GOMAXPROCS(0)
	// Sizes falling, 10 apart: a Get of one less than a size is best fitted
	// by that size's buffer when it is kept.
	size := func(i int) int { return 1000 - 10*i }
	for i := range procs + 2 {
		l.Put(make([]float64, size(i)))
	}
	if l.Len() != procs {
		t.Fatalf("%d buffers kept, want GOMAXPROCS = %d", l.Len(), procs)
	}
	for i := range 2 {
		if got := l.Get(size(i) - 1); got != nil && cap(got) == size(i) {
			t.Fatalf("the buffer of %d, put back %d-th, kept where the %d put back first should have gone", size(i), i+1, 2)
		}
	}
	if got := l.Get(size(procs+1) - 1); got == nil || cap(got) != size(procs+1) {
		t.Fatalf("the buffer put back last is not kept")
	}
	deadline := time.Now().Add(5 * time.Second)
	for l.Len() > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if l.Len() != 0 {
		t.Fatalf("%d buffers kept after the idle time", l.Len())
	}
}

// NewPer's list keeps per buffers a processor: per times GOMAXPROCS.
func TestListPer(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	for _, per := range []int{1, 4} {
		l := NewPer[float32](time.Minute, per)
		for range per*procs + 3 {
			l.Put(make([]float32, 10))
		}
		if l.Len() != per*procs {
			t.Errorf("per %d: %d buffers kept, want %d", per, l.Len(), per*procs)
		}
	}
}
