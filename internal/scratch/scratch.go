// Package scratch keeps large buffers (of float64 or float32 values) for
// reuse between the calls that need them one after another, such as the
// lazy estimator's kernels of successive features: memory a process writes
// for the first time costs a page fault every 4 KiB (expensive in virtual
// machines) and the garbage collector a cycle, where memory already
// written does not.
package scratch

import (
	"runtime"
	"sync"
	"time"
)

// List is a bounded list of free buffers. It holds at most one buffer per
// processor (GOMAXPROCS; NewPer: more), and lets them all go when none has
// been asked for in its idle time, so that the memory is not kept past the work that
// uses it. Its zero value is not usable: see New.
type List[T any] struct {
	idle time.Duration
	per  int // buffers a processor

	mu    sync.Mutex
	free  [][]T
	timer *time.Timer
	used  bool // a buffer was asked for since the timer last fired
}

// New returns an empty List whose buffers go after idle without a Get.
func New[T any](idle time.Duration) *List[T] { return NewPer[T](idle, 1) }

// NewPer is New for work that holds per buffers at once on each
// processor (a reduction's Gram and its folds'): the List holds up to per
// buffers a processor.
func NewPer[T any](idle time.Duration, per int) *List[T] {
	return &List[T]{idle: idle, per: max(per, 1)}
}

// Get returns a free buffer of n values (its capacity at most twice that:
// a larger one stays for a larger need), whose values are whatever its
// last user left, or nil when there is none.
func (l *List[T]) Get(n int) []T {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.used = true
	best := -1
	for i, b := range l.free {
		if cap(b) >= n && cap(b) <= 2*n && (best < 0 || cap(b) < cap(l.free[best])) {
			best = i
		}
	}
	if best < 0 {
		return nil
	}
	b := l.free[best]
	l.free = append(l.free[:best], l.free[best+1:]...)
	return b[:n]
}

// Take is Get, with a new buffer of n values when there is no free one.
func (l *List[T]) Take(n int) []T {
	if b := l.Get(n); b != nil {
		return b
	}
	return make([]T, n)
}

// Put gives b back for a later Get; its caller must not use it after.
// Beyond its buffers per processor, the one put back longest ago goes: a
// buffer of a size the work no longer asks for (a one-off larger pass)
// must not hold a place that the sizes asked for again and again need.
func (l *List[T]) Put(b []T) {
	if cap(b) == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.free = append(l.free, b[:0])
	if limit := l.per * runtime.GOMAXPROCS(0); len(l.free) > limit {
		l.free = append(l.free[:0], l.free[len(l.free)-limit:]...)
	}
	if l.timer == nil {
		l.timer = time.AfterFunc(l.idle, l.expire)
	}
}

// expire lets the buffers go when none was asked for since it last ran,
// else looks again after another idle period.
func (l *List[T]) expire() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.used {
		l.used = false
		l.timer.Reset(l.idle)
		return
	}
	l.free, l.timer = nil, nil
}

// Len is the number of free buffers.
func (l *List[T]) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.free)
}
