package shapley

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/estimators"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/measures"
)

// baselinedRetrain is retrain with a framework.Baseliner whose baseline is
// better than the full model: its predictions moved halfway to the
// response.
type baselinedRetrain struct{ estimators.Retrain }

func (baselinedRetrain) Baseline(_ context.Context, p *framework.Problem) (framework.Reduced, error) {
	pred := mat.DenseCopyOf(p.FullEval)
	for i, y := range p.YEval {
		pred.Set(i, 0, (pred.At(i, 0)+y)/2)
	}
	return framework.Reduced{Pred: pred}, nil
}

// TestGrandCoalitionIsTheBaseline: for a Baseliner, the grand coalition's
// value is its baseline's score, and the values sum to it minus the empty
// model's (efficiency), not to the full model's difference.
func TestGrandCoalitionIsTheBaseline(t *testing.T) {
	prob := olsProblem(t, 300, 1)
	d, err := NewDesign(4, Stop{}, true, prob.Seed)
	if err != nil {
		t.Fatal(err)
	}
	m := measures.MSE()
	est, err := Estimate(context.Background(), prob, m, prob.Features(), NewPlan(d), baselinedRetrain{}, Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	base, _ := baselinedRetrain{}.Baseline(context.Background(), prob)
	want, err := m.Evaluate(prob.YEval, base.Pred)
	if err != nil {
		t.Fatal(err)
	}
	if !est.Baselined || est.Grand.Value != want.Value {
		t.Fatalf("grand coalition %v (baselined %v), want the baseline's score %v", est.Grand.Value, est.Baselined, want.Value)
	}
	sum := 0.0
	for _, r := range est.Results {
		sum += r.VI
	}
	if d := sum - (est.Grand.Value - est.Empty.Value); math.Abs(d) > 1e-9*math.Abs(sum) {
		t.Errorf("values sum to %v, want grand - empty = %v", sum, est.Grand.Value-est.Empty.Value)
	}
	if math.Abs(sum-(est.Full.Value-est.Empty.Value)) < 1e-6 {
		t.Errorf("values sum to the full model's difference %v: the baseline was not used", sum)
	}
}
