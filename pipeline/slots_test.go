package pipeline

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lazyvi/lazyvi/framework/pause"
)

// slotsBound bounds every wait of these tests: a turn that should come
// comes within milliseconds, one that should not is given far more than
// the spare claim's look interval to come wrongly.
const (
	slotsBound = 10 * time.Second
	slotsQuiet = 50 * spareEvery
)

// acquired runs acquire on a goroutine and returns a channel that gets its
// error once it returns.
func acquired(ctx context.Context, s *slots) <-chan error {
	c := make(chan error, 1)
	go func() { c <- s.acquire(ctx) }()
	return c
}

// within waits for c's value, failing t after slotsBound.
func within(t *testing.T, c <-chan error, what string) error {
	t.Helper()
	select {
	case err := <-c:
		return err
	case <-time.After(slotsBound):
		t.Fatalf("%s: no turn after %v", what, slotsBound)
		return nil
	}
}

// notWithin fails t if c gets a value within slotsQuiet.
func notWithin(t *testing.T, c <-chan error, what string) {
	t.Helper()
	select {
	case err := <-c:
		t.Fatalf("%s: took a turn (err %v), want it to wait", what, err)
	case <-time.After(slotsQuiet):
	}
}

// waitWaiting waits until n turns wait for s's slot.
func waitWaiting(t *testing.T, s *slots, n int64) {
	t.Helper()
	for deadline := time.Now().Add(slotsBound); s.waiting.Load() != n; {
		if time.Now().After(deadline) {
			t.Fatalf("%d turns wait, want %d", s.waiting.Load(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// lendOnce lends a turn of s that nothing takes.
func lendOnce(t *testing.T, s *slots) {
	t.Helper()
	if err := s.acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.lend(context.Background(), func() {})
	s.release()
}

// TestSpareTakesOnlyIdleSlots: a spare turn takes no slot before a turn
// has been lent; from then on it takes a free slot where no other turn
// waits, but not one that another turn waits for, even one that began to
// wait after it; a turn wanted from then on waits as any other.
func TestSpareTakesOnlyIdleSlots(t *testing.T) {
	ctx := context.Background()
	s := newSlots(1)
	sctx, claim := withSpare(ctx, s)
	early := acquired(sctx, s)
	notWithin(t, early, "spare, slot free, no turn lent yet")
	if err := s.acquire(ctx); err != nil {
		t.Fatal(err)
	}
	var during error
	s.lend(ctx, func() {
		during = within(t, early, "spare, the slot lent")
		s.release()
	})
	if during != nil {
		t.Fatal(during)
	}
	s.release()

	if err := s.acquire(ctx); err != nil { // another turn holds the slot
		t.Fatal(err)
	}
	spare := acquired(sctx, s)
	notWithin(t, spare, "spare, slot held")
	other := acquired(ctx, s)
	waitWaiting(t, s, 1)
	s.release()
	if err := within(t, other, "the waiting turn"); err != nil {
		t.Fatal(err)
	}
	notWithin(t, spare, "spare, slot held by the turn that waited")
	s.release()
	if err := within(t, spare, "spare, slot free again"); err != nil {
		t.Fatal(err)
	}

	// Wanted: the claim's turns queue as the others' do.
	claim.want()
	second := acquired(sctx, s)
	waitWaiting(t, s, 1)
	s.release()
	if err := within(t, second, "wanted spare"); err != nil {
		t.Fatal(err)
	}
	s.release()
	if len(s.c) != 0 {
		t.Errorf("%d slots held at the end, want 0", len(s.c))
	}
}

// TestSparePauseYields: pause.Point under a spare claim gives the
// slot to a turn that waits for it and returns once the claim has one
// again; without a turn waiting, or once the claim is wanted, it returns
// at once; where ctx ends while it waits it returns ctx's error and
// still takes a slot back, so that the caller's release stays paired.
func TestSparePauseYields(t *testing.T) {
	ctx := context.Background()
	s := newSlots(1)
	lendOnce(t, s)
	sctx, claim := withSpare(ctx, s)
	if err := s.acquire(sctx); err != nil {
		t.Fatal(err)
	}
	if err := pause.Point(sctx); err != nil || len(s.c) != 1 {
		t.Fatalf("pause with no turn waiting: %v, %d slots held, want nil, 1", err, len(s.c))
	}
	other := acquired(ctx, s)
	waitWaiting(t, s, 1)
	paused := make(chan error, 1)
	go func() { paused <- pause.Point(sctx) }()
	if err := within(t, other, "the turn the pause yields to"); err != nil {
		t.Fatal(err)
	}
	notWithin(t, paused, "pause while the other turn holds the slot")
	s.release()
	if err := within(t, paused, "pause"); err != nil {
		t.Fatal(err)
	}

	// Wanted: no pause.
	claim.want()
	other = acquired(ctx, s)
	waitWaiting(t, s, 1)
	if err := pause.Point(sctx); err != nil || len(s.c) != 1 {
		t.Fatalf("pause of a wanted claim: %v, %d slots held, want nil, 1", err, len(s.c))
	}
	s.release()
	if err := within(t, other, "turn after the wanted claim's"); err != nil {
		t.Fatal(err)
	}
	s.release()

	// Cancelled while paused: the slot is taken back once free.
	cctx, cancel := context.WithCancel(ctx)
	cctx, _ = withSpare(cctx, s)
	if err := s.acquire(cctx); err != nil {
		t.Fatal(err)
	}
	other = acquired(ctx, s)
	waitWaiting(t, s, 1)
	go func() { paused <- pause.Point(cctx) }()
	if err := within(t, other, "the turn the cancelled pause yields to"); err != nil {
		t.Fatal(err)
	}
	cancel()
	notWithin(t, paused, "cancelled pause while the slot is held")
	s.release()
	if err := within(t, paused, "cancelled pause"); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled pause: %v, want context.Canceled", err)
	}
	if len(s.c) != 1 {
		t.Fatalf("%d slots held after the cancelled pause, want its 1", len(s.c))
	}
	s.release()
}

// TestLendFreesTheCallersSlot: while lend waits, the caller's slot is
// another turn's to take; lend returns holding one again.
func TestLendFreesTheCallersSlot(t *testing.T) {
	ctx := context.Background()
	s := newSlots(1)
	if err := s.acquire(ctx); err != nil {
		t.Fatal(err)
	}
	var during error
	s.lend(ctx, func() {
		other := acquired(ctx, s)
		during = within(t, other, "a turn while the slot is lent")
		s.release()
	})
	if during != nil {
		t.Fatal(during)
	}
	if len(s.c) != 1 {
		t.Fatalf("%d slots held after lend, want the caller's 1", len(s.c))
	}
	s.release()
}
