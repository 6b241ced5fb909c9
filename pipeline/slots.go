package pipeline

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lazyvi/lazyvi/framework/pause"
)

// slots bounds the jobs that run at once across the parts of a run that
// overlap: Run trains the other repetitions' full models while it reduces
// one's (prepareAhead), and both take their turns from one slots, so that
// the cores a repetition's training leaves idle (a fold that trains alone)
// reduce, and the run never has more than its workers' folds and
// reductions at once (each holding its kernel or its training data in
// memory). A fold that chooses among candidates trains them in its slot
// and, beside it, in the slots that are free (fitCandidates). A nil
// *slots bounds nothing.
//
// Work done ahead of need (a later repetition trained before the first
// one's choice of kind says it is wanted) takes its turns on a spare
// claim (withSpare): only a slot that is free while no other turn waits,
// from the first time a turn is lent (lend: a fold whose last candidate
// trains alone), and it gives the slot back at its next pause.Point
// while another turn waits. Until a turn is lent, a slot that is free is
// free only between one job and the next.
type slots struct {
	c chan struct{}
	// waiting counts the turns, other than spare ones, waiting for a slot.
	waiting atomic.Int64
	// lent is closed the first time a turn is lent.
	lent     chan struct{}
	lentOnce sync.Once
}

// spareEvery is how often a spare turn looks for a slot: far below a fit's
// seconds, far above the cost of a look.
const spareEvery = 5 * time.Millisecond

// newSlots is a slots of n jobs at once (at least one).
func newSlots(n int) *slots {
	return &slots{c: make(chan struct{}, max(n, 1)), lent: make(chan struct{})}
}

// acquire waits for a slot, or for ctx to end (then it returns ctx's
// error and holds none). Every acquire that returns nil is paired with a
// release. Under a spare claim (withSpare) not yet wanted, it takes only a
// slot that no other turn waits for.
func (s *slots) acquire(ctx context.Context) error {
	if s == nil {
		return ctx.Err()
	}
	if cl := spareOf(ctx, s); cl != nil {
		return cl.acquire(ctx)
	}
	select {
	case s.c <- struct{}{}:
		return nil
	default:
	}
	s.waiting.Add(1)
	defer s.waiting.Add(-1)
	select {
	case s.c <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// release gives back a slot that acquire took.
func (s *slots) release() {
	if s != nil {
		<-s.c
	}
}

// do runs f in a slot.
func (s *slots) do(ctx context.Context, f func() error) error {
	if err := s.acquire(ctx); err != nil {
		return err
	}
	defer s.release()
	return f()
}

// lend gives back the slot its caller holds while wait runs (a fold's
// turn while the candidates it started beside it finish: fitCandidates)
// and takes one again before it returns, whatever ctx says, so that the
// caller's release stays paired.
func (s *slots) lend(ctx context.Context, wait func()) {
	if s == nil {
		wait()
		return
	}
	s.lentOnce.Do(func() { close(s.lent) })
	s.release()
	wait()
	s.regain(ctx)
}

// regain takes a slot again for a caller that gave its own back (lend, a
// spare claim's pause) and must hold one when it returns: as acquire
// while ctx is live, else as soon as one is free (a run that ends frees
// its slots as its jobs stop).
func (s *slots) regain(ctx context.Context) {
	if s.acquire(ctx) != nil {
		s.c <- struct{}{}
	}
}

// seat waits for own (a fold's own seat, see fitCandidates; taken first
// when free), a slot, done or ctx, whichever comes first; it returns the
// seat's release, nil where done or ctx came first.
func (s *slots) seat(ctx context.Context, own chan struct{}, done <-chan struct{}) func() {
	select {
	case own <- struct{}{}:
		return func() { <-own }
	default:
	}
	if cl := spareOf(ctx, s); cl != nil {
		for {
			if cl.try() {
				return s.release
			}
			select {
			case own <- struct{}{}:
				return func() { <-own }
			case <-done:
				return nil
			case <-ctx.Done():
				return nil
			case <-cl.wanted:
				return s.seat(ctx, own, done)
			case <-time.After(spareEvery):
			}
		}
	}
	s.waiting.Add(1)
	defer s.waiting.Add(-1)
	select {
	case own <- struct{}{}:
		return func() { <-own }
	case s.c <- struct{}{}:
		return s.release
	case <-done:
	case <-ctx.Done():
	}
	return nil
}

// spareClaim is work that takes s's slots ahead of need (withSpare) until
// want says it is needed: from then on its turns are as any other's.
type spareClaim struct {
	s      *slots
	wanted chan struct{} // closed by want
	once   sync.Once
}

// spareKey is the context key of a spareClaim.
type spareKey struct{}

// withSpare returns ctx for work on a spare claim of s, and the claim:
// its turns (acquire, seat) take only slots that no other turn waits for,
// and its fits give theirs back at a pause.Point while one does.
func withSpare(ctx context.Context, s *slots) (context.Context, *spareClaim) {
	cl := &spareClaim{s: s, wanted: make(chan struct{})}
	ctx = context.WithValue(ctx, spareKey{}, cl)
	return pause.With(ctx, cl.pause), cl
}

// spareOf is ctx's spare claim on s, nil where there is none or the work
// is wanted.
func spareOf(ctx context.Context, s *slots) *spareClaim {
	cl, _ := ctx.Value(spareKey{}).(*spareClaim)
	if cl == nil || cl.s != s || cl.isWanted() {
		return nil
	}
	return cl
}

// want says the claim's work is needed: its turns wait as any other's.
func (cl *spareClaim) want() { cl.once.Do(func() { close(cl.wanted) }) }

func (cl *spareClaim) isWanted() bool {
	select {
	case <-cl.wanted:
		return true
	default:
		return false
	}
}

// try takes a free slot where a turn has been lent and no other turn
// waits for one.
func (cl *spareClaim) try() bool {
	s := cl.s
	select {
	case <-s.lent:
	default:
		return false
	}
	if s.waiting.Load() > 0 {
		return false
	}
	select {
	case s.c <- struct{}{}:
	default:
		return false
	}
	if s.waiting.Load() > 0 { // a turn began to wait as this one took it
		s.release()
		return false
	}
	return true
}

// acquire is slots.acquire on the claim: a slot that try takes, or, once
// the work is wanted, any.
func (cl *spareClaim) acquire(ctx context.Context) error {
	for !cl.try() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-cl.wanted:
			return cl.s.acquire(ctx)
		case <-time.After(spareEvery):
		}
	}
	return nil
}

// pause is the claim's pause.Point: while the work is not wanted and
// another turn waits, it gives the caller's slot back and takes one again
// (regain) once the claim may.
func (cl *spareClaim) pause(ctx context.Context) error {
	if cl.isWanted() || cl.s.waiting.Load() == 0 {
		return nil
	}
	cl.s.release()
	cl.s.regain(ctx)
	return ctx.Err()
}
