package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/measures"
	"github.com/lazyvi/lazyvi/pipeline"
)

// meanBackend builds models that predict the train mean plus a fixed
// multiple of the first column: enough to exercise the runner.
type meanBackend struct{}

func (meanBackend) Capabilities() framework.Capabilities { return framework.Capabilities{} }
func (meanBackend) Options() []framework.OptionInfo      { return nil }
func (meanBackend) New(context.Context, framework.ModelSpec) (framework.Model, error) {
	return &meanModel{}, nil
}

type meanModel struct{ mean float64 }

func (m *meanModel) Fit(_ context.Context, _ mat.Matrix, y []float64) error {
	m.mean = stat.Mean(y, nil)
	return nil
}

func (m *meanModel) Predict(_ context.Context, x mat.Matrix) (*mat.Dense, error) {
	n, _ := x.Dims()
	out := mat.NewDense(n, 1, nil)
	for i := 0; i < n; i++ {
		out.Set(i, 0, m.mean+x.At(i, 0))
	}
	return out, nil
}

func dataset(n int, seed uint64) *dataio.Dataset {
	rng := rand.New(rand.NewPCG(seed, 1))
	x := mat.NewDense(n, 4, nil)
	for i := 0; i < n; i++ {
		a, b := 10+3*rng.NormFloat64(), rng.NormFloat64()
		x.SetRow(i, []float64{a, b, 5, 2*a + b + rng.NormFloat64()})
	}
	return &dataio.Dataset{Source: "test.csv", Names: []string{"a", "b", "const", "y"}, X: x}
}

func TestPrepareSplitsAndStandardises(t *testing.T) {
	d := dataset(300, 1)
	cfg := pipeline.Config{Backend: meanBackend{}, BackendName: "mean", Seed: 4}
	p1, err := pipeline.Prepare(context.Background(), d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if n1, _ := p1.XTrain.Dims(); n1 != 200 {
		t.Errorf("n1 = %d, want 200", n1)
	}
	if got := strings.Join(p1.FeatureNames, ","); got != "a,b,const" {
		t.Errorf("features %q", got)
	}
	for j := 0; j < 3; j++ {
		col := mat.Col(nil, j, p1.XTrain)
		mean, sd := stat.MeanStdDev(col, nil)
		wantSD := 1.0
		if j == 2 {
			wantSD = 0 // a constant column is only centred
		}
		if math.Abs(mean) > 1e-12 || math.Abs(sd-wantSD) > 1e-12 {
			t.Errorf("column %d: train mean %g sd %g, want 0 and %g", j, mean, sd, wantSD)
		}
	}
	// The response stays in its units, and y matches its row.
	for i, y := range p1.YTrain {
		if y < -100 || y > 100 {
			t.Fatalf("YTrain[%d] = %g looks transformed", i, y)
		}
	}
	p2, err := pipeline.Prepare(context.Background(), d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(p1.XEval, p2.XEval) {
		t.Error("same seed, different split")
	}
	cfg.Seed = 5
	p3, _ := pipeline.Prepare(context.Background(), d, cfg)
	if mat.Equal(p1.XEval, p3.XEval) {
		t.Error("different seeds, same split")
	}
}

func TestPrepareBadInput(t *testing.T) {
	bin := framework.Binary
	constant := dataset(50, 2)
	for i := 0; i < 50; i++ {
		constant.X.Set(i, 3, 7)
	}
	for i, tc := range []struct {
		d    *dataio.Dataset
		cfg  pipeline.Config
		want string
	}{
		{dataset(50, 1), pipeline.Config{Target: "nope"}, `test.csv, column "nope": no such column`},
		{constant, pipeline.Config{}, `test.csv, column "y": the response is constant`},
		{dataset(8, 1), pipeline.Config{}, "test.csv: 8 rows are too few"},
		{dataset(50, 1), pipeline.Config{Task: &bin}, "task binary needs a 0/1 response"},
		{dataset(50, 1), pipeline.Config{TrainFrac: 1.5}, "Config.TrainFrac must be in (0, 1), got 1.5"},
	} {
		tc.cfg.Backend = meanBackend{}
		_, err := pipeline.Prepare(context.Background(), tc.d, tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, framework.ErrUsage) {
			t.Errorf("Case %d: want a usage error containing %q, got %v", i, tc.want, err)
		}
	}
}

// shift is an estimator whose reduced model adds c*(column index+1) to the
// full model's predictions, so VI and SE have a closed form.
type shift struct{ c float64 }

func (shift) Name() string { return "shift" }
func (s shift) Reduce(_ context.Context, p *framework.Problem, f framework.Feature) (framework.Reduced, error) {
	if f.Name == "boom" {
		return framework.Reduced{}, errors.New("exploded")
	}
	var out mat.Dense
	out.Apply(func(_, _ int, v float64) float64 { return v + s.c*float64(f.Columns[0]+1) }, p.FullEval)
	return framework.Reduced{Pred: &out, Stats: map[string]float64{"c": s.c}}, nil
}

// Summarize reports the shift.
func (shift) Summarize(stats []map[string]float64) []framework.Field {
	return []framework.Field{{Key: "c", Value: stats[0]["c"]}}
}

func TestEstimateVIAndSE(t *testing.T) {
	p, err := pipeline.Prepare(context.Background(), dataset(300, 3), pipeline.Config{Backend: meanBackend{}, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	feats := p.Features()
	var first []inference.Result
	for _, workers := range []int{1, 3} {
		res, err := pipeline.Estimate(context.Background(), p, measures.MSE(), []framework.Estimator{shift{0.5}}, feats, pipeline.EstimateOptions{InferOptions: inference.InferOptions{Inference: inference.Plain}, Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		for j, r := range res {
			c := 0.5 * float64(j+1)
			t2 := make([]float64, len(p.YEval))
			for i, y := range p.YEval {
				f := p.FullEval.At(i, 0)
				t2[i] = (y-f-c)*(y-f-c) - (y-f)*(y-f)
			}
			vi, sd := stat.MeanStdDev(t2, nil)
			se := sd / math.Sqrt(float64(len(t2)))
			if r.Feature != feats[j].Name || !scalar.EqualWithinAbsOrRel(r.VI, vi, 1e-12, 1e-12) || !scalar.EqualWithinAbsOrRel(r.SE, se, 1e-12, 1e-12) {
				t.Errorf("workers %d feature %d: got %s vi %v se %v, want %s vi %v se %v", workers, j, r.Feature, r.VI, r.SE, feats[j].Name, vi, se)
			}
			if !scalar.EqualWithinAbsOrRel(r.CIHigh-r.VI, 1.959963984540054*se, 1e-9, 1e-9) {
				t.Errorf("feature %d: CI half-width %v, want 1.96 se", j, r.CIHigh-r.VI)
			}
			if c, _ := r.Get("c"); c != 0.5 {
				t.Errorf("feature %d: the estimator's field c is %v, want 0.5", j, c)
			}
		}
		if first == nil {
			first = res
		}
		for j := range res {
			if res[j].Feature != first[j].Feature || res[j].VI != first[j].VI || res[j].SE != first[j].SE {
				t.Errorf("workers %d: result %d differs from the one-worker run", workers, j)
			}
		}
	}
	_, err = pipeline.Estimate(context.Background(), p, measures.MSE(), []framework.Estimator{shift{1}}, []framework.Feature{{Name: "boom", Columns: []int{0}}}, pipeline.EstimateOptions{InferOptions: inference.InferOptions{Inference: inference.Plain}})
	if err == nil || !strings.Contains(err.Error(), "estimator shift, feature boom: exploded") {
		t.Errorf("error should name estimator and feature, got %v", err)
	}
	_, err = pipeline.Estimate(context.Background(), p, measures.Accuracy(), []framework.Estimator{shift{1}}, feats, pipeline.EstimateOptions{InferOptions: inference.InferOptions{Inference: inference.Plain}})
	if !errors.Is(err, framework.ErrUsage) {
		t.Errorf("accuracy on a real response: want a usage error, got %v", err)
	}
}

func TestResultJSONExtra(t *testing.T) {
	for i, tc := range []struct {
		r    inference.Result
		want string
	}{
		{inference.Result{Feature: "x", Estimator: "dropout"}, `"seconds":0}`},
		{inference.Result{Feature: "x", Estimator: "lazy", Extra: []framework.Field{{Key: "lambda", Value: 2.0}}}, `"seconds":0,"lambda":2}`},
		{inference.Result{Feature: "x", Estimator: "lazy", Extra: []framework.Field{{Key: "lambda", Value: nil}, {Key: "no_update", Value: true}}}, `"seconds":0,"lambda":null,"no_update":true}`},
	} {
		b, err := json.Marshal(tc.r)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(string(b), tc.want) {
			t.Errorf("Case %d: want suffix %s, got %s", i, tc.want, b)
		}
		var back inference.Result
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(back.Extra) != fmt.Sprint(tc.r.Extra) || back.Feature != "x" {
			t.Errorf("Case %d: round trip gave %+v, want %+v", i, back, tc.r)
		}
	}
}
