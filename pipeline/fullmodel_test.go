package pipeline_test

import (
	"context"
	"errors"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/measures"
	"github.com/lazyvi/lazyvi/pipeline"
)

// reportBackend builds meanModels that report a training as its options
// say: options loss (the validation loss), rows (the validation rows,
// default MinSelectRows), stop ("patience" or "cap") and slope (the
// prediction is the train mean plus slope times column 0).
// released counts the models released, made (where set) the models made.
type reportBackend struct{ released, made *atomic.Int32 }

func (reportBackend) Capabilities() framework.Capabilities { return framework.Capabilities{} }
func (reportBackend) Options() []framework.OptionInfo      { return nil }
func (b reportBackend) New(_ context.Context, spec framework.ModelSpec) (framework.Model, error) {
	if b.made != nil {
		b.made.Add(1)
	}
	loss, _ := strconv.ParseFloat(spec.Options["loss"], 64)
	slope, _ := strconv.ParseFloat(spec.Options["slope"], 64)
	rows := pipeline.MinSelectRows
	if r, ok := spec.Options["rows"]; ok {
		rows, _ = strconv.Atoi(r)
	}
	return &reportModel{released: b.released, slope: slope,
		report: framework.FitReport{Epochs: 7, StoppedBy: spec.Options["stop"], ValidRows: rows, ValidLoss: loss}}, nil
}

type reportModel struct {
	meanModel
	slope    float64
	report   framework.FitReport
	released *atomic.Int32
}

func (m *reportModel) FitReport() framework.FitReport { return m.report }
func (m *reportModel) Close() error {
	if m.released != nil {
		m.released.Add(1)
	}
	return nil
}

func (m *reportModel) Predict(_ context.Context, x mat.Matrix) (*mat.Dense, error) {
	n, _ := x.Dims()
	out := mat.NewDense(n, 1, nil)
	for i := 0; i < n; i++ {
		out.Set(i, 0, m.mean+m.slope*x.At(i, 0))
	}
	return out, nil
}

func candidates(losses ...string) []pipeline.Candidate {
	out := make([]pipeline.Candidate, len(losses))
	for i, l := range losses {
		out[i] = pipeline.Candidate{Name: "c" + strconv.Itoa(i), Options: map[string]string{"loss": l}}
	}
	return out
}

// TestPrepareChoosesCandidate: the lowest validation loss wins, unless it
// is within SelectTol of an earlier candidate's; the chosen options become
// the problem's spec, laid over Config.Options; the others are released.
// Where the validation rows are too few to choose by, the first is kept,
// and any other fitted beside it is released.
func TestPrepareChoosesCandidate(t *testing.T) {
	d := dataset(200, 3)
	for _, c := range []struct {
		losses []string
		rows   int
		want   string
	}{
		{[]string{"1", "0.995", "0.9"}, 200, "c2"},
		{[]string{"1", "0.995"}, 200, "c0"},
		{[]string{"0.5", "0.7", "0.6"}, 200, "c0"},
		{[]string{"2", "1.5", "1.49"}, 200, "c1"},
		// Too few validation rows to choose by: the first.
		{[]string{"1", "0.5"}, 199, "c0"},
	} {
		var released, made atomic.Int32
		cfg := pipeline.Config{Backend: reportBackend{&released, &made}, Seed: 1,
			Options:    map[string]string{"stop": "patience", "loss": "9", "rows": strconv.Itoa(c.rows)},
			Candidates: candidates(c.losses...)}
		p, err := pipeline.Prepare(context.Background(), d, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if p.Chosen != c.want {
			t.Errorf("losses %v: chose %q, want %q", c.losses, p.Chosen, c.want)
		}
		if few := c.rows < pipeline.MinSelectRows; few != strings.Contains(p.Selection, "too few") {
			t.Errorf("%d validation rows: selection note %q", c.rows, p.Selection)
		}
		k, _ := strconv.Atoi(strings.TrimPrefix(c.want, "c"))
		if got := p.Spec.Options["loss"]; got != c.losses[k] || p.Spec.Options["stop"] != "patience" {
			t.Errorf("losses %v: spec options %v, want loss %s over stop=patience", c.losses, p.Spec.Options, c.losses[k])
		}
		trained := len(c.losses)
		if c.rows < pipeline.MinSelectRows {
			trained = 1 // the others are not scored
		} else if int(made.Load()) != trained {
			t.Errorf("losses %v: %d models made, want %d", c.losses, made.Load(), trained)
		}
		if released.Load() != made.Load()-1 {
			t.Errorf("losses %v: %d models released of %d made, want all but the chosen", c.losses, released.Load(), made.Load())
		}
		if len(p.Candidates) != trained || *p.Candidates[0].ValidLoss != 1*mustFloat(c.losses[0]) || p.FitReport.Epochs != 7 {
			t.Errorf("losses %v: candidate scores %+v, fit report %+v", c.losses, p.Candidates, p.FitReport)
		}
		p.Close()
	}
}

func mustFloat(s string) float64 {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		panic(err)
	}
	return v
}

// TestRunDiagnostics checks the intercept-only baseline, R² and the
// warnings against direct computations on the problem's rows.
func TestRunDiagnostics(t *testing.T) {
	d := dataset(300, 5)
	ctx := context.Background()
	mse := measures.MSE()
	for _, c := range []struct {
		stop, baselineSlope string
		warnings            []string
	}{
		{"patience", "0", nil},
		{"cap", "0", []string{"epoch cap (7 epochs)"}},
		// A baseline that predicts as well as the full model: not beaten.
		{"patience", "6", []string{"does not beat the same baseline"}},
	} {
		cfg := pipeline.Config{Backend: reportBackend{}, Seed: 2, Options: map[string]string{"stop": c.stop, "slope": "6"},
			Baselines: []pipeline.Baseline{{Name: "same", Backend: reportBackend{}, Options: map[string]string{"slope": c.baselineSlope}}}}
		rep, err := pipeline.Run(ctx, d, cfg, mse, []framework.Estimator{shift{0.1}}, pipeline.EstimateOptions{Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		p, err := pipeline.Prepare(ctx, d, cfg)
		if err != nil {
			t.Fatal(err)
		}
		ytr := stat.Mean(p.YTrain, nil)
		var icept, sse, sst float64
		ev := stat.Mean(p.YEval, nil)
		for i, y := range p.YEval {
			icept += (y - ytr) * (y - ytr)
			r := y - p.FullEval.At(i, 0)
			sse += r * r
			sst += (y - ev) * (y - ev)
		}
		icept /= float64(len(p.YEval))
		p.Close()
		if len(rep.Full.Baselines) != 2 || rep.Full.Baselines[0].Name != pipeline.InterceptName {
			t.Fatalf("baselines %+v, want intercept and same", rep.Full.Baselines)
		}
		b := rep.Full.Baselines[0]
		if !scalar.EqualWithinRel(b.Score, -icept, 1e-12) || !scalar.EqualWithinAbs(b.Gain, rep.Full.Score+icept, 1e-9) || !(b.SE > 0 && b.GainSE > 0) {
			t.Errorf("intercept baseline %+v, want score %g, gain %g", b, -icept, rep.Full.Score+icept)
		}
		if rep.Full.R2 == nil || !scalar.EqualWithinAbs(*rep.Full.R2, 1-sse/sst, 1e-12) {
			t.Errorf("R2 %v, want %g", rep.Full.R2, 1-sse/sst)
		}
		if rep.Full.StoppedBy != c.stop || rep.Full.Epochs != 7 {
			t.Errorf("stopped by %q after %d epochs, want %q after 7", rep.Full.StoppedBy, rep.Full.Epochs, c.stop)
		}
		if len(rep.Warnings) != len(c.warnings) {
			t.Fatalf("stop %s, baseline slope %s: warnings %q, want %d", c.stop, c.baselineSlope, rep.Warnings, len(c.warnings))
		}
		for i, w := range c.warnings {
			if !strings.Contains(rep.Warnings[i], w) {
				t.Errorf("warning %q does not say %q", rep.Warnings[i], w)
			}
		}
		if s := rep.Full.Baselines[1]; c.baselineSlope == "6" && (s.Gain != 0 || math.IsNaN(s.GainSE)) {
			t.Errorf("baseline identical to the full model: gain %g, se %g; want 0", s.Gain, s.GainSE)
		}
	}
}

// TestPrepareFoldsChoosesOnce: with cross-fitting the first fold chooses
// and every fold trains its choice.
func TestPrepareFoldsChoosesOnce(t *testing.T) {
	d := dataset(300, 4)
	cfg := pipeline.Config{Backend: reportBackend{}, Seed: 1, Options: map[string]string{"stop": "patience"},
		Candidates: candidates("1", "0.5", "0.8")}
	folds, err := pipeline.PrepareFolds(context.Background(), d, cfg, 3, 2)
	if err != nil {
		t.Fatal(err)
	}
	for k, p := range folds {
		if p.Spec.Options["loss"] != "0.5" {
			t.Errorf("fold %d: options %v, want the chosen loss=0.5", k+1, p.Spec.Options)
		}
		p.Close()
	}
	if folds[0].Chosen != "c1" || len(folds[0].Candidates) != 3 || len(folds[1].Candidates) != 0 {
		t.Errorf("fold 1 chose %q among %d, fold 2 among %d; want c1 among 3, then none", folds[0].Chosen, len(folds[0].Candidates), len(folds[1].Candidates))
	}
}

// failingBackend's models cannot be fitted, as logistic regression cannot
// on separable classes without a penalty.
type failingBackend struct{}

func (failingBackend) Capabilities() framework.Capabilities { return framework.Capabilities{} }
func (failingBackend) Options() []framework.OptionInfo      { return nil }
func (failingBackend) New(context.Context, framework.ModelSpec) (framework.Model, error) {
	return &failingModel{}, nil
}

type failingModel struct{ meanModel }

func (*failingModel) Fit(context.Context, mat.Matrix, []float64) error {
	return errors.New("did not converge")
}

// TestRunBaselineLeftOut: a comparison baseline that cannot be fitted is
// left out with a warning that says why, and the run's results stand (the
// baselines are scored after the reductions); the other baselines are
// scored as usual.
func TestRunBaselineLeftOut(t *testing.T) {
	d := dataset(300, 5)
	cfg := pipeline.Config{Backend: reportBackend{}, Seed: 2, Options: map[string]string{"stop": "patience", "slope": "6"},
		Baselines: []pipeline.Baseline{{Name: "broken", Backend: failingBackend{}}, {Name: "same", Backend: reportBackend{}, Options: map[string]string{"slope": "0"}}}}
	for _, crossfit := range []int{0, 2} {
		cfg.CrossFit = crossfit
		rep, err := pipeline.Run(context.Background(), d, cfg, measures.MSE(), []framework.Estimator{shift{0.1}}, pipeline.EstimateOptions{Workers: 1})
		if err != nil {
			t.Fatalf("crossfit %d: %v", crossfit, err)
		}
		if len(rep.Results) != 3 {
			t.Errorf("crossfit %d: %d results, want 3 (one per feature)", crossfit, len(rep.Results))
		}
		if len(rep.Full.Baselines) != 2 || rep.Full.Baselines[0].Name != pipeline.InterceptName || rep.Full.Baselines[1].Name != "same" {
			t.Errorf("crossfit %d: baselines %+v, want intercept and same", crossfit, rep.Full.Baselines)
		}
		if len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], "broken baseline was left out") || !strings.Contains(rep.Warnings[0], "did not converge") {
			t.Errorf("crossfit %d: warnings %q, want one about the broken baseline", crossfit, rep.Warnings)
		}
	}
}
