package pipeline

import "context"

// slots bounds the jobs that run at once across the parts of a run that
// overlap: Run trains the other repetitions' full models while it reduces
// one's (prepareAhead), and both take their turns from one slots, so that
// the cores a repetition's training leaves idle (a fold that trains alone)
// reduce, and the run never has more than its workers' folds and
// reductions at once (each holding its kernel or its training data in
// memory). A fold that chooses among candidates trains them in its slot
// and, beside it, in the slots that are free (fitCandidates). A nil
// *slots bounds nothing.
type slots struct{ c chan struct{} }

// newSlots is a slots of n jobs at once (at least one).
func newSlots(n int) *slots { return &slots{c: make(chan struct{}, max(n, 1))} }

// acquire waits for a slot, or for ctx to end (then it returns ctx's
// error and holds none). Every acquire that returns nil is paired with a
// release.
func (s *slots) acquire(ctx context.Context) error {
	if s == nil {
		return ctx.Err()
	}
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
