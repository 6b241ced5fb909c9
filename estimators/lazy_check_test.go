package estimators

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
)

// checkInputs are checkAlpha's inputs for feature f of p on the rf model:
// the dropped train rows, their targets and the full model's residuals.
func checkInputs(t *testing.T, r *rfModel, p *framework.Problem, f framework.Feature) (*mat.Dense, []float64, []float64) {
	t.Helper()
	x := p.Drop(p.XTrain, f)
	base, err := rfMultiplierModel{r}.Predict(context.Background(), x)
	if err != nil {
		t.Fatal(err)
	}
	e := make([]float64, len(p.YTrain))
	for i, y := range p.YTrain {
		e[i] = y - base.At(i, 0)
	}
	return x, p.YTrain, e
}

// evalMSE is the evaluation rows' mean squared error of the rf model's
// exact ridge update at alpha (+Inf: none).
func evalMSE(r *rfModel, p *framework.Problem, f framework.Feature, alpha float64) float64 {
	theta := append([]float64(nil), r.theta...)
	if !math.IsInf(alpha, 1) {
		w, _, _, _ := ridgeOptimum(r, p, f, alpha)
		for i := range theta {
			theta[i] += w[i]
		}
	}
	pev := r.phi(p.Drop(p.XEval, f))
	var pred mat.VecDense
	pred.MulVec(pev, mat.NewVecDense(len(theta), theta))
	s := 0.0
	for i, y := range p.YEval {
		d := y - pred.AtVec(i)
		s += d * d
	}
	return s / float64(len(p.YEval))
}

// The check at full size (lazy_check.go) on random features near the
// interpolation threshold, 400 train rows against 250 parameters (it
// fits on 300, holds out 100): a ruinous penalty, as a subsample far below
// the threshold picks, is raised to one whose exact update's evaluation
// error is at least 5 times lower (measured: 24 times); the penalty the
// dense cross-validation on all the rows picks is kept exactly.
func TestCheckAlpha(t *testing.T) {
	r := newRF(4, 250, 5)
	p := problemFor(t, rfMultiplierModel{r}, 400, 400, 4, 23)
	f := framework.Feature{Name: "x4", Columns: []int{3}}
	if !needsCheck(400, r.NumParams()) {
		t.Fatalf("400 rows against %d parameters: the check would not run", r.NumParams())
	}
	x, y, e := checkInputs(t, r, p, f)
	check := func(alpha float64) (float64, float64) {
		stats := map[string]float64{}
		got, _, flops, err := Lazy{}.checkAlpha(context.Background(), rfMultiplierModel{r}, x, y, e, 1, p.Seed, alpha, stats)
		if err != nil {
			t.Fatal(err)
		}
		if flops <= 0 {
			t.Errorf("alpha %g: %g flops counted", alpha, flops)
		}
		return got, stats[statRaised]
	}

	const tiny = 1e-8
	got, raised := check(tiny)
	before, after := evalMSE(r, p, f, tiny), evalMSE(r, p, f, got)
	t.Logf("alpha %g (evaluation error %.4f) raised %v decades to %g (%.4f)", tiny, before, raised, got, after)
	if !(raised > 0) || !(after < before/5) {
		t.Errorf("alpha %g (evaluation error %.4f): raised %v decades to %g (%.4f), want a raise to an error below a fifth", tiny, before, raised, got, after)
	}

	dense, err := Lazy{Folds: 3}.Reduce(context.Background(), p, f)
	if err != nil {
		t.Fatal(err)
	}
	good := dense.Stats[statLambda]
	if got, raised := check(good); got != good || raised != 0 {
		t.Errorf("the dense cross-validation's alpha %g: checked to %g (raised %v), want it kept", good, got, raised)
	}
}

// A checked baseline vouches for a feature's penalty within half a decade
// of its own or above it (checkVouch): the feature is then not checked
// again; below it, or with an unchecked baseline, it is.
func TestCheckVouched(t *testing.T) {
	r := newRF(4, 250, 5)
	p := problemFor(t, rfMultiplierModel{r}, 400, 100, 4, 23)
	f := framework.Feature{Name: "x4", Columns: []int{3}}
	own, err := Lazy{Memory: tinyMemory}.Reduce(context.Background(), p, f)
	if err != nil {
		t.Fatal(err)
	}
	l := own.Stats[statLambda]
	if _, checked := own.Stats[statRaised]; !checked || math.IsInf(l, 1) {
		t.Fatalf("without a baseline: stats %v, want a checked update", own.Stats)
	}
	for _, c := range []struct {
		name    string
		base    map[string]float64
		checked bool
	}{
		{"checked baseline, smaller penalty", map[string]float64{statLambda: l / 30, statRaised: 0}, false},
		{"checked baseline, larger penalty", map[string]float64{statLambda: l * 30, statRaised: 0}, true},
		{"unchecked baseline", map[string]float64{statLambda: l / 30}, true},
		{"baseline without update", map[string]float64{statLambda: math.Inf(1), statRaised: 0}, true},
	} {
		base := func() (framework.Reduced, error) { return framework.Reduced{Stats: c.base}, nil }
		red, err := Lazy{Memory: tinyMemory}.ReduceFrom(context.Background(), p, f, base)
		if err != nil {
			t.Fatal(err)
		}
		if a := red.Stats[statLambda]; a < l/3 || a > 3*l {
			t.Fatalf("%s: penalty %g, not near the feature's own %g: the case proves nothing", c.name, a, l)
		}
		if _, got := red.Stats[statRaised]; got != c.checked {
			t.Errorf("%s: checked %v, want %v (stats %v)", c.name, got, c.checked, red.Stats)
		}
	}
}
