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

// prepareAhead prepares the run's repetitions in order on a goroutine of
// its own, each while Run reduces the one before, and hands each over on
// the returned channel. It starts a repetition once the reductions of the
// one before are half done (s.halfway): their pace until then is their
// own (what a forecast extrapolates), and their second half covers the
// time the repetition's last fold trains alone, which would otherwise
// leave cores idle. After an error (sent as the last preparedRep) or the
// end of ctx it closes the channel; stop cancels it, closes the folds of
// any repetition it prepared that Run did not take, and waits for it.
func (s *runState) prepareAhead(ctx context.Context) (reps <-chan preparedRep, stop func()) {
	s.halfway = make([]*gate, s.reps)
	for i := range s.halfway {
		s.halfway[i] = newGate()
	}
	ctx, cancel := context.WithCancel(ctx)
	ch := make(chan preparedRep)
	cfg := s.cfg
	go func() {
		defer close(ch)
		for rep := range s.reps {
			if rep > 0 {
				select {
				case <-s.halfway[rep-1].c:
				case <-ctx.Done():
					return
				}
			}
			start := time.Now()
			folds, kc, err := prepareRepetition(ctx, s.d, &cfg, rep, s.opt.Workers)
			if err != nil && s.reps > 1 {
				err = fmt.Errorf("repetition %d/%d: %w", rep+1, s.reps, err)
			}
			select {
			case ch <- preparedRep{folds: folds, kc: kc, cfg: cfg, secs: time.Since(start).Seconds(), err: err}:
			case <-ctx.Done():
				closeAll(folds)
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return ch, func() {
		cancel()
		for pr := range ch {
			closeAll(pr.folds)
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

// at returns a progress callback that passes (done, total) on to progress
// (where set) and opens g once done is half of total.
func (g *gate) at(progress func(done, total int)) func(done, total int) {
	return func(done, total int) {
		if progress != nil {
			progress(done, total)
		}
		if 2*done >= total {
			g.open()
		}
	}
}
