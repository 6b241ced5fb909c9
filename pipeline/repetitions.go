package pipeline

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/framework/pause"
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
// fewer). Until then their pace is their own, which a forecast of the run
// time (progress.Forecast) extrapolates from the same share.
const (
	aheadShare   = 0.05
	aheadMinJobs = 4
)

// aheadReps is how many repetitions beyond the one Run reduces may be
// prepared or preparing at once: each holds its folds' data and models.
const aheadReps = 2

// TrainedTogether is how many of a run's repetitions Run (cfg, ests,
// workers workers: 0 one per CPU) prepares side by side before its first
// reduction: the training a progress display sees before the first count
// is theirs. That is aheadReps + 1 (or the run's repetitions, where fewer)
// where the run has a core to spare and either the kind of model is known
// from the start or the backend's fits pause (pause.Pauser), so that the
// later ones train ahead of the first one's choice of kind on the cores it
// leaves idle (prepareAhead; where a rival wins, they train again as the
// rival after the choice); else 1: the others wait for the choice.
func TrainedTogether(cfg Config, ests []framework.Estimator, workers int) int {
	cfg.Rivals, _ = rivalsRunning(cfg.Rivals, ests) // as Run keeps them
	if workersOf(workers) < 2 {
		return 1
	}
	if _, pauses := cfg.Backend.(pause.Pauser); cfg.choosesKind() && !pauses {
		return 1
	}
	return min(max(cfg.Repeats, 1), aheadReps+1)
}

// prepareAhead prepares the run's repetitions, each on a goroutine of its
// own, and returns take, which hands repetition rep's over once it is
// ready (false where ctx ended first). Where the kind of model is known
// from the start, the first TrainedTogether are prepared at once; the
// others, which train the kind of model the first one's choice made
// (chooseKind), once it is prepared and its reductions have begun
// (s.begun), and at most aheadReps beyond the one Run reduces (a
// repetition waits for the one aheadReps + 1 before it to be finished,
// s.finished). Their training and the reductions share the run's slots,
// so that the cores a repetition's training leaves idle (a candidate or a
// fold that trains alone) reduce or train another repetition.
//
// Where the first repetition chooses the kind, the others of the first
// TrainedTogether are prepared at once too, as the backend's kind, on a
// spare claim (withSpare): they train only on slots nothing else waits for,
// which the first repetition's last candidate leaves idle, and give them
// back at their next pause while the first one's work waits. Where the
// choice keeps the backend's kind they are wanted from then on and handed
// over as they are (the same Config, so the same models and numbers);
// where it picks a rival they are cancelled, closed and prepared again as
// the rival, as the others are. stop cancels what is still preparing,
// waits for it, and closes the folds of any repetition that take did not
// hand over.
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
	chosen := newGate()          // the first repetition is prepared: cfg is the run's
	cfg, initial := s.cfg, s.cfg // Run's repetitions replace s.cfg as they go
	kept := false                // the first repetition kept the backend's kind (before chosen opens)
	together, spare := TrainedTogether(initial, s.ests, s.opt.Workers), 0
	if initial.choosesKind() {
		together, spare = 1, together // the later ones on spare claims
	}
	var wg sync.WaitGroup
	prepareIn := func(ctx context.Context, rep int, c Config) preparedRep {
		start := time.Now()
		folds, kc, err := prepareRepetition(ctx, s.d, &c, rep, s.opt.Workers)
		if err != nil && s.reps > 1 {
			err = fmt.Errorf("repetition %d/%d: %w", rep+1, s.reps, err)
		}
		if rep == 0 {
			cfg, kept = c, kc == nil || kc.rival == nil
			if err == nil {
				chosen.open()
			}
		}
		return preparedRep{folds: folds, kc: kc, cfg: c, secs: time.Since(start).Seconds(), err: err}
	}
	prepare := func(rep int, c Config) { ready[rep] <- prepareIn(ctx, rep, c) }
	wait := func(g *gate) bool { return g.passed(ctx) }
	// ahead prepares rep on a spare claim until the first repetition's
	// choice: it reports whether it handed rep over (the kind kept).
	ahead := func(rep int) bool {
		sctx, cancelSpare := context.WithCancel(ctx)
		defer cancelSpare()
		sctx, claim := withSpare(sctx, initial.slots)
		go func() {
			select {
			case <-chosen.c:
				if kept {
					claim.want()
				} else {
					cancelSpare()
				}
			case <-sctx.Done():
			}
		}()
		pr := prepareIn(sctx, rep, initial)
		if wait(chosen) && kept {
			ready[rep] <- pr
			return true
		}
		closeAll(pr.folds)
		return false
	}
	for rep := range s.reps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if rep < together {
				prepare(rep, initial) // the kind is the run's: no choice to wait for
				return
			}
			if rep < spare && ahead(rep) {
				return
			}
			if !wait(chosen) || !wait(s.begun) {
				return
			}
			if rep > aheadReps && !wait(s.finished[rep-aheadReps-1]) {
				return
			}
			prepare(rep, cfg)
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

// gate is a one-way door: closed until open is called, once or more.
type gate struct {
	once sync.Once
	c    chan struct{}
}

func newGate() *gate { return &gate{c: make(chan struct{})} }

func (g *gate) open() { g.once.Do(func() { close(g.c) }) }

// passed waits for g to open (true) or ctx to end (false).
func (g *gate) passed(ctx context.Context) bool {
	select {
	case <-g.c:
		return true
	case <-ctx.Done():
		return false
	}
}

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
