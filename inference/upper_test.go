package inference_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/measures"
)

// TestScoreUpperInterval: with ScoreUpper the estimate, its standard
// error, the lower end and the p-value are the symmetric interval's; the
// upper end is VI + x with x = z sqrt(se^2 + c x), c = 4 mse(full)/n the
// growth of mse's paired variance (the ensemble's averaged full model),
// so x exceeds z se; with r2, c is that over Var(y); with a measure that
// does not say (accuracy) the interval stays symmetric.
func TestScoreUpperInterval(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	n := 120
	y, f, r := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range y {
		x := rng.NormFloat64()
		y[i] = x + 0.5*rng.NormFloat64()
		f[i], r[i] = 0.9*x, 0.5*x
	}
	reps := trainingNoise(rng, y, f, r, crossFit{3, 3, 0.3, 0.2})
	// The ensemble's full model: each row's predictions averaged.
	ensFull := make([]float64, n)
	for _, rep := range reps {
		for _, p := range rep.Folds {
			for i, row := range p.EvalRows {
				ensFull[row] += p.FullEval.At(i, 0) / float64(len(reps))
			}
		}
	}
	mse, vy, ybar := 0.0, 0.0, 0.0
	for i := range y {
		mse += (y[i] - ensFull[i]) * (y[i] - ensFull[i]) / float64(n)
		ybar += y[i] / float64(n)
	}
	for i := range y {
		vy += (y[i] - ybar) * (y[i] - ybar) / float64(n)
	}
	z := distuv.UnitNormal.Quantile(0.975)
	for _, c := range []struct {
		m      framework.Measure
		growth float64
	}{
		{measures.MSE(), 4 * mse / float64(n)},
		{measures.R2(), 4 * mse / vy / float64(n)},
	} {
		opt := inference.InferOptions{Inference: inference.Plain, Ensemble: true, Debias: true, Delta: 0.01}
		sym, err := inference.InferRepeated(reps, c.m, opt)
		if err != nil {
			t.Fatal(err)
		}
		opt.ScoreUpper = true
		got, err := inference.InferRepeated(reps, c.m, opt)
		if err != nil {
			t.Fatal(err)
		}
		s, g := sym[0], got[0]
		if g.VI != s.VI || g.SE != s.SE || g.CILow != s.CILow || g.PValue != s.PValue {
			t.Errorf("%s: vi %g se %g low %g p %g, want the symmetric interval's %g %g %g %g", c.m.Name(), g.VI, g.SE, g.CILow, g.PValue, s.VI, s.SE, s.CILow, s.PValue)
		}
		x := g.CIHigh - g.VI
		if want := z * math.Sqrt(g.SE*g.SE+c.growth*x); math.Abs(x-want) > 1e-9*want || !(x > z*g.SE*1.01) {
			t.Errorf("%s: upper half-width %g, want z sqrt(se^2 + c x) = %g (c %g), above z se = %g", c.m.Name(), x, want, c.growth, z*g.SE)
		}
	}
	// Accuracy says nothing of its variance's growth.
	ry, rf, rr := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range ry {
		ry[i] = float64(i % 2)
		rf[i], rr[i] = 0.5+0.3*(ry[i]-0.5)+0.1*rng.Float64(), 0.45+0.1*rng.Float64()
	}
	bin := trainingNoise(rng, ry, rf, rr, crossFit{3, 3, 0, 0})
	opt := inference.InferOptions{Inference: inference.Plain, Ensemble: true, Debias: true, ScoreUpper: true}
	res, err := inference.InferRepeated(bin, measures.Accuracy(), opt)
	if err != nil {
		t.Fatal(err)
	}
	if g := res[0]; math.Abs((g.CIHigh-g.VI)-(g.VI-g.CILow)) > 1e-12 {
		t.Errorf("accuracy: interval [%g, %g] not symmetric about %g", g.CILow, g.CIHigh, g.VI)
	}
	if _, err := inference.InferRepeated(reps, measures.MSE(), inference.InferOptions{Inference: inference.Split, ScoreUpper: true}); err == nil {
		t.Error("split inference with ScoreUpper: no error")
	}
}

// TestScoreUpperCovers is the case the option is for, with a known truth:
// y = b z + e, e ~ N(0, 1), a full model that is the least-squares fit of
// b on the other folds' rows (b_k z) and a reduced model that predicts 0,
// so that the VI of z is b^2 exactly. On a sample where z relates less to
// y the fitted b_k is smaller, and so are the estimate and its standard
// error (about 2 |b_k| / sqrt(n)): the symmetric interval's upper end
// misses the truth more often than the level allows, its lower end
// rarely. The ScoreUpper interval covers at the level, within four Monte
// Carlo standard errors; the symmetric one is checked to miss by more
// than that, so that the check can fail.
func TestScoreUpperCovers(t *testing.T) {
	const (
		n, K  = 90, 3
		b     = 0.25
		draws = 2000
		level = 0.95
	)
	rng := rand.New(rand.NewPCG(23, 24))
	feats := []framework.Feature{{Name: "z", Columns: []int{0}}}
	est := fixed{map[*framework.Problem]*mat.Dense{}}
	var coverSym, coverScore, missAbove int
	for range draws {
		zs, y := make([]float64, n), make([]float64, n)
		for i := range y {
			zs[i] = rng.NormFloat64()
			y[i] = b*zs[i] + rng.NormFloat64()
		}
		perm := rng.Perm(n)
		rep := &inference.Reductions{Estimators: []framework.Estimator{est}, Features: feats}
		for k := range K {
			eval := perm[k*n/K : (k+1)*n/K]
			inEval := map[int]bool{}
			for _, row := range eval {
				inEval[row] = true
			}
			var szy, szz float64
			for i := range y {
				if !inEval[i] {
					szy += zs[i] * y[i]
					szz += zs[i] * zs[i]
				}
			}
			bk := szy / szz
			m := len(eval)
			yk, fk := make([]float64, m), make([]float64, m)
			for i, row := range eval {
				yk[i], fk[i] = y[row], bk*zs[row]
			}
			p := fold(yk, fk)
			p.EvalRows = append([]int(nil), eval...)
			rep.Folds = append(rep.Folds, p)
			rep.Reduced = append(rep.Reduced, [][]framework.Reduced{{{Pred: mat.NewDense(m, 1, nil)}}})
			rep.Seconds = append(rep.Seconds, [][]float64{{0}})
		}
		truth := b * b
		for _, score := range []bool{false, true} {
			res, err := rep.Infer(measures.MSE(), inference.InferOptions{Inference: inference.Plain, Level: level, ScoreUpper: score})
			if err != nil {
				t.Fatal(err)
			}
			in := res[0].CILow <= truth && truth <= res[0].CIHigh
			switch {
			case score && in:
				coverScore++
			case !score && in:
				coverSym++
			case !score && truth > res[0].CIHigh:
				missAbove++
			}
		}
	}
	sd := math.Sqrt(level * (1 - level) / draws)
	sym, score := float64(coverSym)/draws, float64(coverScore)/draws
	if score < level-4*sd {
		t.Errorf("ScoreUpper covers %.3f, want at least %.3f (level %.2f less four Monte Carlo sd)", score, level-4*sd, level)
	}
	if sym > level-4*sd || missAbove < (draws-coverSym)*3/4 {
		t.Errorf("symmetric interval covers %.3f, %d of its %d misses above it: want it below %.3f, missing mostly above", sym, missAbove, draws-coverSym, level-4*sd)
	}
	t.Logf("coverage: symmetric %.3f (%d of %d misses above), ScoreUpper %.3f", sym, missAbove, draws-coverSym, score)
}
