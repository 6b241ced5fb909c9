package inference_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/measures"
)

// crossFit is trainingNoise's design: M repetitions of K folds, the full
// and reduced models' training noise sf and sr.
type crossFit struct {
	M, K   int
	sf, sr float64
}

// trainingNoise builds M repetitions of a K-fold cross-fit of the rows y
// whose full model predicts f_i + u_mi and whose reduced model (one
// feature) predicts r_i + v_mi in repetition m, u ~ N(0, sf^2) and
// v ~ N(0, sr^2) independent: networks that agree on f and r up to what
// each training adds. No baseline: the reduced model is scored against
// the full one.
func trainingNoise(rng *rand.Rand, y, f, r []float64, c crossFit) []*inference.Reductions {
	n := len(y)
	M, K, sf, sr := c.M, c.K, c.sf, c.sr
	feats := []framework.Feature{{Name: "a", Columns: []int{0}}}
	est := fixed{map[*framework.Problem]*mat.Dense{}}
	var reps []*inference.Reductions
	for range M {
		perm := rng.Perm(n)
		rep := &inference.Reductions{Estimators: []framework.Estimator{est}, Features: feats}
		for k := range K {
			rows := perm[k*n/K : (k+1)*n/K]
			m := len(rows)
			yk, fk, rk := make([]float64, m), make([]float64, m), make([]float64, m)
			for i, row := range rows {
				yk[i] = y[row]
				fk[i] = f[row] + sf*rng.NormFloat64()
				rk[i] = r[row] + sr*rng.NormFloat64()
			}
			p := fold(yk, fk)
			p.EvalRows = append([]int(nil), rows...)
			p.Seed = 5
			rep.Folds = append(rep.Folds, p)
			rep.Reduced = append(rep.Reduced, [][]framework.Reduced{{{Pred: mat.NewDense(m, 1, rk)}}})
			rep.Seconds = append(rep.Seconds, [][]float64{{0}})
			rep.Base = append(rep.Base, []framework.Reduced{{}})
		}
		reps = append(reps, rep)
	}
	return reps
}

// TestInferDebiasRemovesTrainingNoise: each repetition's networks add
// their own noise (variances sf^2 to the full model's predictions, sr^2 to
// the reduced model's), so that the ensemble of M repetitions' mse VI is
// biased by (sr^2 - sf^2)/M against that of infinitely many,
// VI_inf = mean (y - r)^2 - mean (y - f)^2. The extrapolated estimate
// (Debias) has no such bias: checked over seeded data sets, with a
// tolerance of four standard errors of the mean, and the ensemble's bias
// found where the closed form puts it.
func TestInferDebiasRemovesTrainingNoise(t *testing.T) {
	const (
		n, M, K = 300, 3, 3
		sf, sr  = 0.6, 0.2 // the full model's networks disagree more: a null's VI biased down
		draws   = 300
	)
	rng := rand.New(rand.NewPCG(11, 12))
	m := measures.MSE()
	var devDebias, devEns []float64
	for range draws {
		y, f, r := make([]float64, n), make([]float64, n), make([]float64, n)
		inf := 0.0
		for i := range y {
			x := rng.NormFloat64()
			y[i] = x + 0.5*rng.NormFloat64()
			f[i] = 0.9 * x
			r[i] = 0.9 * x // a null feature: the full and reduced models agree
			inf += ((y[i]-r[i])*(y[i]-r[i]) - (y[i]-f[i])*(y[i]-f[i])) / n
		}
		reps := trainingNoise(rng, y, f, r, crossFit{M, K, sf, sr})
		ens, err := inference.InferRepeated(reps, m, inference.InferOptions{Inference: inference.Plain, Ensemble: true})
		if err != nil {
			t.Fatal(err)
		}
		deb, err := inference.InferRepeated(reps, m, inference.InferOptions{Inference: inference.Plain, Ensemble: true, Debias: true})
		if err != nil {
			t.Fatal(err)
		}
		devEns = append(devEns, ens[0].VI-inf)
		devDebias = append(devDebias, deb[0].VI-inf)
	}
	within := func(name string, dev []float64, want float64) {
		t.Helper()
		mean, sd := stat.MeanStdDev(dev, nil)
		if tol := 4 * sd / math.Sqrt(float64(len(dev))); math.Abs(mean-want) > tol {
			t.Errorf("%s: mean deviation from VI_inf %.5f, want %.5f +- %.5f", name, mean, want, tol)
		}
	}
	within("ensemble", devEns, (sr*sr-sf*sf)/M)
	within("debiased", devDebias, 0)
}

// TestInferBiasAware: the bias-aware interval is VI +- (B + z se) with
// B = |VI_debiased - VI_ens| (the size of the extrapolation), centred on
// the ensemble's or the debiased estimate, and its p-value the worst over
// biases within B, so that interval and test agree.
func TestInferBiasAware(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	n := 120
	y, f, r := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range y {
		x := rng.NormFloat64()
		y[i] = x + 0.5*rng.NormFloat64()
		f[i], r[i] = 0.9*x, 0.7*x
	}
	reps := trainingNoise(rng, y, f, r, crossFit{3, 3, 0.5, 0.3})
	m := measures.MSE()
	z := distuv.UnitNormal.Quantile(0.975)
	for _, debias := range []bool{false, true} {
		base := inference.InferOptions{Inference: inference.Plain, Ensemble: true, Delta: 0.01}
		ens, err := inference.InferRepeated(reps, m, base)
		if err != nil {
			t.Fatal(err)
		}
		base.Debias = true
		deb, err := inference.InferRepeated(reps, m, base)
		if err != nil {
			t.Fatal(err)
		}
		opt := base
		opt.Debias, opt.BiasAware = debias, true
		got, err := inference.InferRepeated(reps, m, opt)
		if err != nil {
			t.Fatal(err)
		}
		want := ens[0]
		if debias {
			want = deb[0]
		}
		b := math.Abs(deb[0].VI - ens[0].VI)
		g := got[0]
		if g.VI != want.VI || g.SE != want.SE || g.BiasBound != b || b == 0 {
			t.Errorf("debias %v: vi %g se %g bound %g, want %g %g %g", debias, g.VI, g.SE, g.BiasBound, want.VI, want.SE, b)
		}
		if h := b + z*want.SE; math.Abs(g.CILow-(want.VI-h)) > 1e-12 || math.Abs(g.CIHigh-(want.VI+h)) > 1e-12 {
			t.Errorf("debias %v: interval [%g, %g], want %g +- %g", debias, g.CILow, g.CIHigh, want.VI, h)
		}
		if p := distuv.UnitNormal.Survival((want.VI - b - 0.01) / want.SE); math.Abs(g.PValue-p) > 1e-12 {
			t.Errorf("debias %v: p %g, want %g", debias, g.PValue, p)
		}
	}
}

// TestInferCoherent: under every inference option that gives one
// procedure's interval and test (the bias-aware and ScoreUpper ones
// included), each
// result's interval contains its estimate and lies above delta exactly
// when its one-sided p-value is below (1 - level)/2, at several levels and
// deltas, on seeded data where some features matter and some do not, for
// an estimator that declines the ensemble too.
func TestInferCoherent(t *testing.T) {
	feats := []framework.Feature{{Name: "a", Columns: []int{0}}, {Name: "b", Columns: []int{0}}, {Name: "c", Columns: []int{0}}}
	m := measures.MSE()
	checked, above := 0, 0
	for seed := range uint64(20) {
		reps, _, _, _, _, _, _, _ := ensembleReps(rand.New(rand.NewPCG(seed, 99)), 60, 3, 3, feats)
		if seed%2 == 1 {
			reps = declined(reps) // the repetitions' own estimates (permute's)
		}
		for _, o := range []inference.InferOptions{
			{Inference: inference.Split}, {Inference: inference.Plain}, {Inference: inference.Perturbed},
			{Inference: inference.Split, Ensemble: true}, {Inference: inference.Plain, Ensemble: true},
			{Inference: inference.Plain, Ensemble: true, Debias: true},
			{Inference: inference.Plain, Ensemble: true, BiasAware: true},
			{Inference: inference.Plain, Ensemble: true, Debias: true, BiasAware: true},
			{Inference: inference.Perturbed, Ensemble: true, Debias: true},
			{Inference: inference.Plain, ScoreUpper: true},
			{Inference: inference.Plain, Ensemble: true, Debias: true, ScoreUpper: true},
			{Inference: inference.Plain, Ensemble: true, Debias: true, BiasAware: true, ScoreUpper: true},
			{Inference: inference.Plain, Ensemble: true, Debias: true, BiasAware: true, DirectedBias: true, ScoreUpper: true},
		} {
			for _, level := range []float64{0.9, 0.95} {
				for _, delta := range []float64{-0.05, 0, 0.02} {
					o.Level, o.Delta = level, delta
					res, err := inference.InferRepeated(reps, m, o)
					if err != nil {
						t.Fatal(err)
					}
					for _, r := range res {
						inside := r.CILow <= r.VI && r.VI <= r.CIHigh
						if excl, sig := r.CILow > delta, r.PValue < (1-level)/2; !inside || excl != sig {
							t.Errorf("%+v, %s: vi %g in [%g, %g] %v; above delta %v, p %g below %g %v", o, r.Feature, r.VI, r.CILow, r.CIHigh, inside, excl, r.PValue, (1-level)/2, sig)
						}
						checked++
						if r.CILow > delta {
							above++
						}
					}
				}
			}
		}
	}
	if above == 0 || above == checked {
		t.Fatalf("%d of %d intervals above delta: the check cannot tell agreement from chance", above, checked)
	}
}

// TestInferDebiasNeedsEnsemble: the extrapolation and the bias bound need
// the ensemble of two or more repetitions and a paired estimate.
func TestInferDebiasNeedsEnsemble(t *testing.T) {
	feats := []framework.Feature{{Name: "a", Columns: []int{0}}}
	reps, _, _, _, _, _, _, _ := ensembleReps(rand.New(rand.NewPCG(1, 2)), 30, 2, 3, feats)
	m := measures.MSE()
	for _, c := range []struct {
		reps []*inference.Reductions
		opt  inference.InferOptions
	}{
		{reps, inference.InferOptions{Inference: inference.Plain, Debias: true}},
		{reps[:1], inference.InferOptions{Inference: inference.Plain, Ensemble: true, BiasAware: true}},
		{reps, inference.InferOptions{Inference: inference.Split, Ensemble: true, Debias: true}},
	} {
		if _, err := inference.InferRepeated(c.reps, m, c.opt); err == nil {
			t.Errorf("%+v with %d repetitions: no error", c.opt, len(c.reps))
		}
	}
}

// TestInferDirectedBias: with DirectedBias the bias bound B = |VI_debiased
// - VI_ens| widens only the side the extrapolation came from: the lower
// end (and the p-value) where it moved the estimate down, the upper end
// where it moved it up. Two designs give the two signs: full networks
// that disagree more than the reduced ones (a VI biased down by the
// ensemble, moved up) and the reverse.
func TestInferDirectedBias(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	n := 150
	y, f, r := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range y {
		x := rng.NormFloat64()
		y[i] = x + 0.5*rng.NormFloat64()
		f[i], r[i] = 0.9*x, 0.7*x
	}
	m := measures.MSE()
	z := distuv.UnitNormal.Quantile(0.975)
	for _, c := range []struct {
		sf, sr float64
		up     bool // the extrapolation moves the estimate up
	}{{0.6, 0.2, true}, {0.2, 0.6, false}} {
		reps := trainingNoise(rng, y, f, r, crossFit{3, 3, c.sf, c.sr})
		opt := inference.InferOptions{Inference: inference.Plain, Ensemble: true, Delta: 0.01}
		ens, err := inference.InferRepeated(reps, m, opt)
		if err != nil {
			t.Fatal(err)
		}
		opt.Debias, opt.BiasAware = true, true
		aware, err := inference.InferRepeated(reps, m, opt)
		if err != nil {
			t.Fatal(err)
		}
		opt.DirectedBias = true
		got, err := inference.InferRepeated(reps, m, opt)
		if err != nil {
			t.Fatal(err)
		}
		a, g := aware[0], got[0]
		b := g.VI - ens[0].VI
		if up := b > 0; up != c.up || g.VI != a.VI || g.SE != a.SE || g.BiasBound != a.BiasBound || math.Abs(b) != a.BiasBound {
			t.Fatalf("sf %g sr %g: moved by %g (want up %v), vi %g se %g bound %g, want the bias-aware %g %g %g", c.sf, c.sr, b, c.up, g.VI, g.SE, g.BiasBound, a.VI, a.SE, a.BiasBound)
		}
		sym := z * g.SE
		wantLo, wantHi, wantP := g.VI-sym, g.VI+a.BiasBound+sym, distuv.UnitNormal.Survival((g.VI-0.01)/g.SE)
		if !c.up {
			wantLo, wantHi, wantP = g.VI-a.BiasBound-sym, g.VI+sym, a.PValue
		}
		if math.Abs(g.CILow-wantLo) > 1e-12 || math.Abs(g.CIHigh-wantHi) > 1e-12 || math.Abs(g.PValue-wantP) > 1e-15 {
			t.Errorf("sf %g sr %g: [%g, %g] p %g, want [%g, %g] p %g", c.sf, c.sr, g.CILow, g.CIHigh, g.PValue, wantLo, wantHi, wantP)
		}
	}
	if err := (inference.InferOptions{Inference: inference.Plain, DirectedBias: true}).Check(); err == nil {
		t.Error("DirectedBias without BiasAware: no error")
	}
}
