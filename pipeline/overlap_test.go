package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/measures"
	"github.com/lazyvi/lazyvi/pipeline"
)

// busy counts the fits and reductions running at once, the most seen, and
// the fits so far (signalling each on fitted).
type busy struct {
	mu         sync.Mutex
	now, most  int
	fits       int
	fitted     chan struct{}
	overlapped bool
}

func (b *busy) enter(fit bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.now++
	b.most = max(b.most, b.now)
	if fit {
		b.fits++
		select {
		case b.fitted <- struct{}{}:
		default:
		}
	}
}

func (b *busy) leave() {
	b.mu.Lock()
	b.now--
	b.mu.Unlock()
}

func (b *busy) fitCount() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.fits
}

type busyBackend struct{ b *busy }

func (busyBackend) Capabilities() framework.Capabilities { return framework.Capabilities{} }
func (busyBackend) Options() []framework.OptionInfo      { return nil }
func (bb busyBackend) New(context.Context, framework.ModelSpec) (framework.Model, error) {
	return &busyModel{b: bb.b}, nil
}

type busyModel struct {
	meanModel
	b *busy
}

func (m *busyModel) Fit(ctx context.Context, x mat.Matrix, y []float64) error {
	m.b.enter(true)
	defer m.b.leave()
	return m.meanModel.Fit(ctx, x, y)
}

// waitingShift is shift whose first reduction, where wait is set, waits
// (up to a bound) for the three repetitions' models (one split each) to be
// fitted: the second's may be fitted before it starts, beside the first
// one's, the third's only once the first one's reductions have begun.
type waitingShift struct {
	shift
	b     *busy
	first *atomic.Bool
	wait  bool
}

func (w waitingShift) Reduce(ctx context.Context, p *framework.Problem, f framework.Feature) (framework.Reduced, error) {
	w.b.enter(false)
	defer w.b.leave()
	if !w.wait || !w.first.CompareAndSwap(false, true) {
		return w.shift.Reduce(ctx, p, f)
	}
	deadline := time.After(20 * time.Second)
	for w.b.fitCount() < 3 {
		select {
		case <-w.b.fitted:
		case <-deadline:
			return w.shift.Reduce(ctx, p, f)
		}
	}
	w.b.mu.Lock()
	w.b.overlapped = true
	w.b.mu.Unlock()
	return w.shift.Reduce(ctx, p, f)
}

// TestRunOverlapsRepetitions: Run trains the other repetitions' full
// models before the first one's reductions are done (the first reduction
// of the first repetition, waiting while the others finish, sees the
// second's and the third's models fitted), never running more fits and
// reductions at once than its workers, and the results are those of the
// same run on one worker.
func TestRunOverlapsRepetitions(t *testing.T) {
	ctx := context.Background()
	d := dataset(120, 5)
	run := func(workers int) (*pipeline.Report, *busy) {
		b := &busy{fitted: make(chan struct{}, 1)}
		cfg := pipeline.Config{Backend: busyBackend{b}, BackendName: "busy", Seed: 3, Repeats: 3}
		ests := []framework.Estimator{waitingShift{shift: shift{0.5}, b: b, first: new(atomic.Bool), wait: workers > 1}}
		opt := pipeline.EstimateOptions{InferOptions: inference.InferOptions{Inference: inference.Plain}, Workers: workers}
		rep, err := pipeline.Run(ctx, d, cfg, measures.MSE(), ests, opt)
		if err != nil {
			t.Fatal(err)
		}
		return rep, b
	}
	two, b := run(2)
	if !b.overlapped {
		t.Error("the second and third repetitions' models were not both fitted while the first repetition reduced: their training waited for its reductions")
	}
	if b.most > 2 {
		t.Errorf("%d fits and reductions ran at once on 2 workers", b.most)
	}
	one, _ := run(1)
	for i, w := range one.Results {
		g := two.Results[i]
		if g.Feature != w.Feature || g.VI != w.VI || g.SE != w.SE {
			t.Errorf("result %d: 2 workers %s vi %v se %v, 1 worker %s vi %v se %v", i, g.Feature, g.VI, g.SE, w.Feature, w.VI, w.SE)
		}
	}
}

// failingRepBackend builds meanModels, counting those made and released,
// whose fit fails for the model of one seed.
type failingRepBackend struct {
	failSeed       int64
	made, released *atomic.Int32
}

func (failingRepBackend) Capabilities() framework.Capabilities { return framework.Capabilities{} }
func (failingRepBackend) Options() []framework.OptionInfo      { return nil }
func (b failingRepBackend) New(_ context.Context, spec framework.ModelSpec) (framework.Model, error) {
	b.made.Add(1)
	return &failingRepModel{b: b, fail: spec.Seed == b.failSeed}, nil
}

type failingRepModel struct {
	meanModel
	b    failingRepBackend
	fail bool
}

func (m *failingRepModel) Fit(ctx context.Context, x mat.Matrix, y []float64) error {
	if m.fail {
		return errors.New("planted failure")
	}
	return m.meanModel.Fit(ctx, x, y)
}

func (m *failingRepModel) Close() error {
	m.b.released.Add(1)
	return nil
}

// TestRunRepetitionFails: where a later repetition's training fails while
// the first is reduced, Run returns that repetition's error, and every
// model made, those of the repetitions prepared beside it included, is
// released.
func TestRunRepetitionFails(t *testing.T) {
	d := dataset(120, 5)
	for _, rep := range []int{1, 2} {
		var made, released atomic.Int32
		be := failingRepBackend{failSeed: inference.RepeatSeed(3, rep), made: &made, released: &released}
		cfg := pipeline.Config{Backend: be, BackendName: "failing", Seed: 3, Repeats: 3}
		opt := pipeline.EstimateOptions{InferOptions: inference.InferOptions{Inference: inference.Plain}, Workers: 2}
		_, err := pipeline.Run(context.Background(), d, cfg, measures.MSE(), []framework.Estimator{shift{0.5}}, opt)
		want := fmt.Sprintf("repetition %d/3", rep+1)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "planted failure") {
			t.Errorf("repetition %d fails: error %v, want one naming %q and the failure", rep+1, err, want)
		}
		if released.Load() != made.Load() {
			t.Errorf("repetition %d fails: %d models released of %d made", rep+1, released.Load(), made.Load())
		}
	}
}

// TestRunPreparesSecondRepetitionBeside: with two workers and the kind of
// model known from the start (no rival), the second repetition's model
// trains beside the first one's, before anything can be reduced (each
// repetition one split, one model: each fit waits for another,
// overlapBackend), and the results are the one-worker run's.
func TestRunPreparesSecondRepetitionBeside(t *testing.T) {
	ctx := context.Background()
	d := dataset(120, 5)
	run := func(workers int, wait time.Duration) (*pipeline.Report, bool) {
		var now, most atomic.Int32
		cfg := pipeline.Config{Backend: overlapBackend{wait: wait, now: &now, most: &most}, BackendName: "overlap", Seed: 3, Repeats: 2}
		opt := pipeline.EstimateOptions{InferOptions: inference.InferOptions{Inference: inference.Plain}, Workers: workers}
		rep, err := pipeline.Run(ctx, d, cfg, measures.MSE(), []framework.Estimator{shift{0.5}}, opt)
		if err != nil {
			t.Fatal(err)
		}
		return rep, most.Load() >= 2
	}
	two, met := run(2, 20*time.Second)
	if !met {
		t.Error("with 2 workers the two repetitions' models never trained at once")
	}
	one, met := run(1, 200*time.Millisecond)
	if met {
		t.Error("with 1 worker two models trained at once")
	}
	for i, w := range one.Results {
		g := two.Results[i]
		if g.Feature != w.Feature || g.VI != w.VI || g.SE != w.SE {
			t.Errorf("result %d: 2 workers %s vi %v se %v, 1 worker %s vi %v se %v", i, g.Feature, g.VI, g.SE, w.Feature, w.VI, w.SE)
		}
	}
}
