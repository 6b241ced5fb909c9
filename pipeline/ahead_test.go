package pipeline_test

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/framework/pause"
	"github.com/lazyvi/lazyvi/measures"
	"github.com/lazyvi/lazyvi/pipeline"
)

// aheadBackend is countBackend whose fits pause (pause.Pauser): each
// calls pause.Point between its steps. The first repetition's slow
// candidate (option role "slow", seed first) pauses until a model of
// another repetition has started fitting, up to wait, and records whether
// one did (met): the other repetitions then trained beside it.
type aheadBackend struct {
	countBackend
	first       int64
	wait        time.Duration
	others, met *atomic.Bool
}

func (aheadBackend) PausesFits() {}

func (b aheadBackend) New(ctx context.Context, spec framework.ModelSpec) (framework.Model, error) {
	m, err := b.countBackend.New(ctx, spec)
	if err != nil {
		return nil, err
	}
	return &aheadModel{Model: m, b: b, seed: spec.Seed, slow: spec.Options["role"] == "slow"}, nil
}

type aheadModel struct {
	framework.Model
	b    aheadBackend
	seed int64
	slow bool
}

func (m *aheadModel) FitReport() framework.FitReport { return framework.FitReportOf(m.Model) }

func (m *aheadModel) Close() error { return framework.Release(m.Model) }

func (m *aheadModel) Fit(ctx context.Context, x mat.Matrix, y []float64) error {
	if m.seed != m.b.first {
		m.b.others.Store(true)
	}
	for range 3 {
		if err := pause.Point(ctx); err != nil {
			return err
		}
	}
	if m.slow && m.seed == m.b.first {
		for deadline := time.Now().Add(m.b.wait); !m.b.others.Load(); time.Sleep(time.Millisecond) {
			if err := pause.Point(ctx); err != nil {
				return err
			}
			if time.Now().After(deadline) {
				break
			}
		}
		m.b.met.Store(m.b.others.Load())
	}
	return m.Model.Fit(ctx, x, y)
}

func (m *aheadModel) Predict(ctx context.Context, x mat.Matrix) (*mat.Dense, error) {
	return m.Model.Predict(ctx, x)
}

// TestRunTrainsAheadOfTheKindChoice: where the first repetition chooses
// the kind of model and its backend's fits pause, the second repetition
// trains beside the first one's slow candidate with two workers (not with
// one), on the slots that candidate leaves idle; where the choice keeps
// the backend's kind it is handed over as it is, where it picks the rival
// it is cancelled and prepared again as the rival; the results are the
// same as one worker's either way.
func TestRunTrainsAheadOfTheKindChoice(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("one CPU: nothing trains ahead")
	}
	d := dataset(300, 6)
	ctx := context.Background()
	cands := []pipeline.Candidate{{Name: "fast", Options: map[string]string{"role": "fast"}}, {Name: "slow", Options: map[string]string{"role": "slow"}}}
	for _, c := range []struct {
		own, rival, want string
	}{
		{"6", "0", "main"},
		{"0", "6", "rival"},
	} {
		run := func(workers int, wait time.Duration) (*pipeline.Report, bool) {
			var ownMade, rivalMade atomic.Int32
			var others, met atomic.Bool
			rival := pipeline.Baseline{Name: "rival", Backend: countBackend{made: &rivalMade}, Options: map[string]string{"slope": c.rival}}
			be := aheadBackend{countBackend: countBackend{made: &ownMade}, first: 3, wait: wait, others: &others, met: &met}
			cfg := pipeline.Config{Backend: be, BackendName: "main", Seed: 3, CrossFit: 3, Repeats: 2, Candidates: cands,
				Options: map[string]string{"slope": c.own}, Rivals: []pipeline.Baseline{rival}, Baselines: []pipeline.Baseline{rival}}
			rep, err := pipeline.Run(ctx, d, cfg, measures.MSE(), []framework.Estimator{shift{0}}, pipeline.EstimateOptions{Workers: workers})
			if err != nil {
				t.Fatalf("slopes %s vs %s, %d workers: %v", c.own, c.rival, workers, err)
			}
			if rep.Backend != c.want {
				t.Fatalf("slopes %s vs %s, %d workers: backend %q, want %s", c.own, c.rival, workers, rep.Backend, c.want)
			}
			// The rival is fitted on the first repetition's folds, and on
			// the second's only where it is chosen, whatever ran ahead.
			if want := map[bool]int32{true: 6, false: 3}[c.want == "rival"]; rivalMade.Load() != want {
				t.Errorf("slopes %s vs %s, %d workers: %d rival models, want %d", c.own, c.rival, workers, rivalMade.Load(), want)
			}
			return rep, met.Load()
		}
		one, met := run(1, 200*time.Millisecond)
		if met {
			t.Errorf("slopes %s vs %s: with 1 worker the second repetition trained beside the first's slow candidate", c.own, c.rival)
		}
		two, met := run(2, 20*time.Second)
		if !met {
			t.Errorf("slopes %s vs %s: with 2 workers the second repetition never trained beside the first's slow candidate", c.own, c.rival)
		}
		for i, w := range one.Results {
			g := two.Results[i]
			if g.Feature != w.Feature || g.VI != w.VI || g.SE != w.SE {
				t.Errorf("slopes %s vs %s, result %d: 2 workers %s vi %v se %v, 1 worker %s vi %v se %v", c.own, c.rival, i, g.Feature, g.VI, g.SE, w.Feature, w.VI, w.SE)
			}
		}
	}
}

// TestTrainedTogether: with two workers the first three repetitions train
// before the first reduction where the kind is known from the start or the
// backend's fits pause (they train ahead of the choice); with one worker,
// or a kind to choose by a backend whose fits do not pause, only the first.
func TestTrainedTogether(t *testing.T) {
	var made atomic.Int32
	rival := []pipeline.Baseline{{Name: "rival", Backend: countBackend{made: &made}}}
	ests := []framework.Estimator{shift{0}}
	pauses := aheadBackend{countBackend: countBackend{made: &made}}
	for _, c := range []struct {
		be      framework.Backend
		rivals  []pipeline.Baseline
		workers int
		want    int
	}{
		{pauses, rival, 2, 3},
		{pauses, rival, 1, 1},
		{countBackend{made: &made}, rival, 2, 1},
		{countBackend{made: &made}, nil, 2, 3},
		{countBackend{made: &made}, nil, 1, 1},
	} {
		cfg := pipeline.Config{Backend: c.be, Repeats: 5, Rivals: c.rivals}
		if got := pipeline.TrainedTogether(cfg, ests, c.workers); got != c.want {
			_, p := c.be.(interface{ PausesFits() })
			t.Errorf("pausing %v, %d rivals, %d workers: %d together, want %d", p, len(c.rivals), c.workers, got, c.want)
		}
	}
}
