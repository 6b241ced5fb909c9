package pipeline

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/lazyvi/lazyvi/framework"
)

// preparedRep is one repetition's folds as prepareAhead hands them over:
// the folds, the model choice (the first repetition's, where one is made),
// the run's Config after it, and the seconds the preparation took.
type preparedRep struct {
	folds []*framework.Problem
	kc    *kindChoice
	cfg   Config
	secs  float64
	err   error
}

// aheadShare and aheadMinJobs say when the first repetition's reductions
// have begun enough for the repetitions not prepared beside it (see
// prepareAhead) to start training beside them: aheadShare of its
// reductions, and at least aheadMinJobs (or half of them, where that is
// fewer).
const (
	aheadShare   = 0.05
	aheadMinJobs = 4
)

// aheadReps is how many repetitions beyond the one Run reduces may be
// prepared or preparing at once: each holds its folds' data and models.
const aheadReps = 2

// TrainedTogether is how many of a run's repeats repetitions Run prepares
// side by side before its first reduction, with workers workers (0: one
// per CPU; see prepareAhead): the training a progress display sees before
// the first count is theirs.
func TrainedTogether(repeats, workers int) int {
	if workersOf(workers) > 1 {
		return min(max(repeats, 1), aheadReps+1)
	}
	return 1
}

// prepareAhead prepares the run's repetitions, each on a goroutine of its
// own, and returns take, which hands repetition rep's over once it is
// ready (false where ctx ended first). With more than one worker, the
// first aheadReps + 1 repetitions are prepared at once: the others with
// the run's Config as it is before the first one's choice of the kind of
// model (chooseKind), which they keep unless that choice is a rival, and
// then they are prepared again with the rival's (speculate). The later
// ones (and those, where one worker has no core to spare) train the kind
// the choice made, once the first repetition is prepared and its
// reductions have begun (s.begun), and at most aheadReps beyond the one
// Run reduces (a repetition waits for the one aheadReps + 1 before it to
// be finished, s.finished). Their training and the reductions share the
// run's slots, so that the cores a repetition's training leaves idle (a
// candidate or a fold that trains alone, as the first repetition's do
// before anything can be reduced) reduce or train another repetition.
// stop cancels what is still preparing, waits for it, and closes the
// folds of any repetition that take did not hand over.
func (s *runState) prepareAhead(ctx context.Context) (take func(rep int) (preparedRep, bool), stop func()) {
	s.begun = newGate()
	s.finished = make([]*gate, s.reps)
	for i := range s.finished {
		s.finished[i] = newGate()
	}
	ctx, cancel := context.WithCancel(ctx)
	ready := make([]chan preparedRep, s.reps)
	for i := range ready {
		ready[i] = make(chan preparedRep, 1)
	}
	chosen := newGate() // the first repetition is prepared: cfg is the run's
	cfg := s.cfg
	switched := false // the first repetition chose a rival kind: cfg is the rival's
	var wg sync.WaitGroup
	prepare := func(ctx context.Context, rep int, c Config) preparedRep {
		start := time.Now()
		folds, kc, err := prepareRepetition(ctx, s.d, &c, rep, s.opt.Workers)
		if err != nil && s.reps > 1 {
			err = fmt.Errorf("repetition %d/%d: %w", rep+1, s.reps, err)
		}
		if rep == 0 {
			cfg, switched = c, kc != nil && kc.rival != nil
			if err == nil {
				chosen.open()
			}
		}
		return preparedRep{folds: folds, kc: kc, cfg: c, secs: time.Since(start).Seconds(), err: err}
	}
	wait := func(g *gate) bool {
		select {
		case <-g.c:
			return true
		case <-ctx.Done():
			return false
		}
	}
	for rep := range s.reps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if rep >= 1 && rep < TrainedTogether(s.reps, s.opt.Workers) {
				if pr, ok := s.speculate(ctx, rep, prepare, chosen, &switched); ok {
					ready[rep] <- pr
					return
				}
			}
			if rep > 0 && (!wait(chosen) || !wait(s.begun)) {
				return
			}
			if rep > aheadReps && !wait(s.finished[rep-aheadReps-1]) {
				return
			}
			ready[rep] <- prepare(ctx, rep, cfg)
		}()
	}
	take = func(rep int) (preparedRep, bool) {
		select {
		case pr := <-ready[rep]:
			return pr, true
		case <-ctx.Done():
			return preparedRep{}, false
		}
	}
	return take, func() {
		cancel()
		wg.Wait()
		for _, r := range ready {
			select {
			case pr := <-r:
				closeAll(pr.folds)
			default:
			}
		}
	}
}

// speculate prepares repetition rep at once, with the run's Config as it
// is before the first repetition's choice (s.cfg), beside the first one,
// and returns it (ok) once that choice is made and kept the kind. A
// choice of a rival (switched, read once chosen is open) cancels it and
// closes its folds (not ok: the caller prepares it again with the
// rival's Config), as does ctx's end.
func (s *runState) speculate(ctx context.Context, rep int, prepare func(context.Context, int, Config) preparedRep, chosen *gate, switched *bool) (preparedRep, bool) {
	sctx, scancel := context.WithCancel(ctx)
	defer scancel()
	go func() {
		select {
		case <-chosen.c:
			if *switched {
				scancel()
			}
		case <-sctx.Done():
		}
	}()
	pr := prepare(sctx, rep, s.cfg)
	select {
	case <-chosen.c:
	case <-ctx.Done():
		closeAll(pr.folds)
		return preparedRep{}, false
	}
	if *switched {
		closeAll(pr.folds)
		return preparedRep{}, false
	}
	return pr, true
}

// gate is a one-way door: closed until open is called, once or more.
type gate struct {
	once sync.Once
	c    chan struct{}
}

func newGate() *gate { return &gate{c: make(chan struct{})} }

func (g *gate) open() { g.once.Do(func() { close(g.c) }) }

// at returns a progress callback that passes (done, total) on to progress
// (where set) and opens g once done is share of total and at least least,
// or half of total where that is fewer.
func (g *gate) at(progress func(done, total int), share float64, least int) func(done, total int) {
	return func(done, total int) {
		if progress != nil {
			progress(done, total)
		}
		if float64(done) >= share*float64(total) && 2*done >= min(2*least, total) {
			g.open()
		}
	}
}
