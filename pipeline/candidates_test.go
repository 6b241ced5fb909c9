package pipeline_test

import (
	"context"
	"errors"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/pipeline"
)

// besideBackend builds models whose fits meet: the first candidate's fit
// (option first) waits until the costliest's (option last) has started,
// and the costliest's waits until its context ends where wait is set (a
// fit the selection must cancel), up to a bound in both cases, then
// reports rows validation rows. It counts the models made and released.
type besideBackend struct {
	rows           int
	wait           bool
	lastStarted    chan struct{}
	made, released *atomic.Int32
}

func (besideBackend) Capabilities() framework.Capabilities { return framework.Capabilities{} }
func (besideBackend) Options() []framework.OptionInfo      { return nil }
func (b besideBackend) New(_ context.Context, spec framework.ModelSpec) (framework.Model, error) {
	b.made.Add(1)
	return &besideModel{b: b, role: spec.Options["role"]}, nil
}

type besideModel struct {
	meanModel
	b    besideBackend
	role string
}

const besideBound = 20 * time.Second

func (m *besideModel) Fit(ctx context.Context, x mat.Matrix, y []float64) error {
	switch m.role {
	case "first":
		select {
		case <-m.b.lastStarted:
		case <-time.After(besideBound):
			return errors.New("the costliest candidate did not start beside the first")
		}
	case "last":
		close(m.b.lastStarted)
		if m.b.wait {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(besideBound):
				return errors.New("the fit beside the first was not cancelled")
			}
		}
	}
	return m.meanModel.Fit(ctx, x, y)
}

func (m *besideModel) FitReport() framework.FitReport {
	return framework.FitReport{Epochs: 1, ValidRows: m.b.rows, ValidLoss: 1}
}

func (m *besideModel) Close() error {
	m.b.released.Add(1)
	return nil
}

// TestCandidatesCostliestBesideFirst: the costliest candidate (the last)
// trains beside the first, not after the others; where the first's
// validation rows are too few to choose by, the fit beside it is
// cancelled, released, and not scored, and the first is kept.
func TestCandidatesCostliestBesideFirst(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("one CPU: the candidates train one at a time")
	}
	d := dataset(200, 3)
	for _, c := range []struct {
		rows   int
		wait   bool
		scored int
	}{{pipeline.MinSelectRows, false, 4}, {pipeline.MinSelectRows - 1, true, 1}} {
		var made, released atomic.Int32
		be := besideBackend{rows: c.rows, wait: c.wait, lastStarted: make(chan struct{}), made: &made, released: &released}
		cands := make([]pipeline.Candidate, 4)
		for i := range cands {
			role := map[int]string{0: "first", 3: "last"}[i]
			cands[i] = pipeline.Candidate{Name: "c" + strconv.Itoa(i), Options: map[string]string{"role": role}}
		}
		p, err := pipeline.Prepare(context.Background(), d, pipeline.Config{Backend: be, Seed: 1, Candidates: cands})
		if err != nil {
			t.Fatalf("%d validation rows: %v", c.rows, err)
		}
		if p.Chosen != "c0" || len(p.Candidates) != c.scored {
			t.Errorf("%d validation rows: chose %q of %d scored, want c0 of %d", c.rows, p.Chosen, len(p.Candidates), c.scored)
		}
		if few := c.rows < pipeline.MinSelectRows; few != strings.Contains(p.Selection, "too few") {
			t.Errorf("%d validation rows: selection note %q", c.rows, p.Selection)
		}
		if released.Load() != made.Load()-1 {
			t.Errorf("%d validation rows: %d models released of %d made, want all but the chosen", c.rows, released.Load(), made.Load())
		}
		p.Close()
	}
}

// overlapBackend builds models that count how many fits run at once
// (most: the largest count seen); a fit waits, up to wait, until two have
// run at once, so that fits the slots allow at once do run at once
// whatever the scheduler does, and fits they do not allow had the time
// to.
type overlapBackend struct {
	wait      time.Duration
	now, most *atomic.Int32
}

func (overlapBackend) Capabilities() framework.Capabilities { return framework.Capabilities{} }
func (overlapBackend) Options() []framework.OptionInfo      { return nil }
func (b overlapBackend) New(context.Context, framework.ModelSpec) (framework.Model, error) {
	return &overlapModel{b: b}, nil
}

type overlapModel struct {
	meanModel
	b overlapBackend
}

func (m *overlapModel) Fit(ctx context.Context, x mat.Matrix, y []float64) error {
	n := m.b.now.Add(1)
	defer m.b.now.Add(-1)
	for {
		most := m.b.most.Load()
		if n <= most || m.b.most.CompareAndSwap(most, n) {
			break
		}
	}
	for deadline := time.Now().Add(m.b.wait); m.b.most.Load() < 2 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	return m.meanModel.Fit(ctx, x, y)
}

func (m *overlapModel) FitReport() framework.FitReport {
	return framework.FitReport{Epochs: 1, ValidRows: pipeline.MinSelectRows, ValidLoss: 1}
}

// TestCandidatesWithinWorkers: a fold's candidates train in the run's
// turns (PrepareFolds' workers): with one worker one at a time, with two
// two at a time, whatever the CPUs.
func TestCandidatesWithinWorkers(t *testing.T) {
	d := dataset(200, 3)
	cands := make([]pipeline.Candidate, 4)
	for i := range cands {
		cands[i] = pipeline.Candidate{Name: "c" + strconv.Itoa(i), Options: map[string]string{"i": strconv.Itoa(i)}}
	}
	for _, c := range []struct {
		workers int
		wait    time.Duration // a fit's wait for another beside it
	}{{1, 200 * time.Millisecond}, {2, besideBound}} {
		workers := c.workers
		var now, most atomic.Int32
		probs, err := pipeline.PrepareFolds(context.Background(), d, pipeline.Config{Backend: overlapBackend{c.wait, &now, &most}, Seed: 1, Candidates: cands}, 2, workers)
		if err != nil {
			t.Fatalf("%d workers: %v", workers, err)
		}
		for _, p := range probs {
			p.Close()
		}
		if got := most.Load(); got != int32(workers) {
			t.Errorf("%d workers: %d fits at once, want %d", workers, got, workers)
		}
	}
}
