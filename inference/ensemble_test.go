package inference_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/measures"
)

// ensembleReps builds M repetitions of a cross-fit of n data rows, each
// with its own fold assignment and random full, baseline and reduced
// predictions, and returns them with each row's predictions averaged over
// the repetitions (by data row), and each repetition's own full, baseline
// and reduced predictions by data row (repFull[m], repBase[m],
// repRed[m][f]).
func ensembleReps(rng *rand.Rand, n, M, K int, feats []framework.Feature) (reps []*inference.Reductions, y, full, base []float64, red [][]float64, repFull, repBase [][]float64, repRed [][][]float64) {
	y = randVec(rng, n, 1)
	full, base = make([]float64, n), make([]float64, n)
	red = make([][]float64, len(feats))
	for f := range red {
		red[f] = make([]float64, n)
	}
	est := fixed{map[*framework.Problem]*mat.Dense{}}
	for range M {
		rf, rb := make([]float64, n), make([]float64, n)
		rr := make([][]float64, len(feats))
		for f := range rr {
			rr[f] = make([]float64, n)
		}
		repFull, repBase, repRed = append(repFull, rf), append(repBase, rb), append(repRed, rr)
		perm := rng.Perm(n)
		r := &inference.Reductions{Estimators: []framework.Estimator{est}, Features: feats}
		for k := range K {
			rows := perm[k*n/K : (k+1)*n/K]
			m := len(rows)
			yk, fk, bk := make([]float64, m), make([]float64, m), make([]float64, m)
			rk := make([][]float64, len(feats))
			for i, row := range rows {
				yk[i] = y[row]
				fk[i] = 0.7*y[row] + 0.3*rng.NormFloat64()
				bk[i] = 0.8*y[row] + 0.2*rng.NormFloat64()
				full[row] += fk[i] / float64(M)
				base[row] += bk[i] / float64(M)
				rf[row], rb[row] = fk[i], bk[i]
			}
			for f := range feats {
				rk[f] = make([]float64, m)
				for i, row := range rows {
					rk[f][i] = (0.5+0.2*float64(f))*y[row] + 0.3*rng.NormFloat64()
					red[f][row] += rk[f][i] / float64(M)
					rr[f][row] = rk[f][i]
				}
			}
			p := fold(yk, fk)
			p.EvalRows = append([]int(nil), rows...)
			p.Seed = 5
			r.Folds = append(r.Folds, p)
			reds := make([]framework.Reduced, len(feats))
			for f := range feats {
				reds[f] = framework.Reduced{Pred: mat.NewDense(m, 1, rk[f])}
			}
			r.Reduced = append(r.Reduced, [][]framework.Reduced{reds})
			r.Seconds = append(r.Seconds, [][]float64{make([]float64, len(feats))})
			r.Base = append(r.Base, []framework.Reduced{{Pred: mat.NewDense(m, 1, bk)}})
		}
		reps = append(reps, r)
	}
	return reps, y, full, base, red, repFull, repBase, repRed
}

// TestInferEnsembleHandComputed: with InferOptions.Ensemble the
// repetitions' out-of-fold predictions are averaged per data row (the
// baseline's and each reduced model's) and plain and perturbed inference
// run once on the averages, as computed here, the standard error then
// widened by the spread of the repetitions' own estimates; without a
// baseline the averaged full model takes its place.
func TestInferEnsembleHandComputed(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	m := measures.MSE()
	feats := []framework.Feature{{Name: "a", Columns: []int{0}}, {Name: "b", Columns: []int{0}}}
	const n, seed, rho = 30, 9, 0.6
	reps, y, full, base, red, repFull, repBase, repRed := ensembleReps(rng, n, 3, 3, feats)
	// want is plain or perturbed inference on all n rows for feature f,
	// reduced predictions rf against the reference ref.
	want := func(f int, rf, ref []float64, perturbed bool) (vi, se float64) {
		lf, lr := sqErr(y, ref), sqErr(y, rf)
		d := make([]float64, n)
		var eps float64
		for i := range d {
			d[i] = lr[i] - lf[i]
			eps += noiseOf(seed, feats[f].Name, i)
		}
		vi, v := stat.Mean(d, nil), stat.Variance(d, nil)
		if perturbed {
			s := stat.StdDev(lf, nil)
			vi += rho * s * eps / n
			v += rho * rho * s * s
		}
		return vi, math.Sqrt(v / n)
	}
	// check compares res with inference on the averaged predictions
	// against the reference ref, its se^2 widened by var_m(VI_m)/M, VI_m
	// repetition m's own predictions (against repRef[m]) inferred on all
	// n rows as the ensemble is.
	check := func(name string, res []inference.Result, ref []float64, repRef [][]float64, perturbed bool) {
		t.Helper()
		for f := range feats {
			vi, se := want(f, red[f], ref, perturbed)
			vis := make([]float64, len(reps))
			for i := range reps {
				vis[i], _ = want(f, repRed[i][f], repRef[i], perturbed)
			}
			se = math.Sqrt(se*se + stat.Variance(vis, nil)/float64(len(reps)))
			if got := res[f]; !scalar.EqualWithinAbsOrRel(got.VI, vi, 1e-12, 1e-12) || !scalar.EqualWithinAbsOrRel(got.SE, se, 1e-12, 1e-12) {
				t.Errorf("%s, feature %s: vi %v se %v, want %v %v", name, feats[f].Name, got.VI, got.SE, vi, se)
			}
		}
	}
	for _, opt := range []inference.InferOptions{
		{Inference: inference.Plain},
		{Inference: inference.Perturbed, Perturb: rho, Seed: seed},
	} {
		opt.Ensemble = true
		res, err := inference.InferRepeated(reps, m, opt)
		if err != nil {
			t.Fatal(err)
		}
		check(opt.Inference.String(), res, base, repBase, opt.Inference == inference.Perturbed)
	}

	// Split: the baseline scored on one half of the n rows (in a seeded
	// order), the reduced models on the other; the same seed gives the
	// same halves.
	res, err := inference.InferRepeated(reps, m, inference.InferOptions{Ensemble: true})
	if err != nil {
		t.Fatal(err)
	}
	if math.IsNaN(res[0].VI) || !(res[0].SE > 0) {
		t.Errorf("split: vi %v se %v", res[0].VI, res[0].SE)
	}
	again, err := inference.InferRepeated(reps, m, inference.InferOptions{Ensemble: true})
	if err != nil {
		t.Fatal(err)
	}
	if again[0].VI != res[0].VI || again[0].SE != res[0].SE {
		t.Errorf("split is not deterministic: %+v then %+v", res[0], again[0])
	}

	// Without baselines the averaged full model is the reference.
	for _, r := range reps {
		r.Base = nil
	}
	res, err = inference.InferRepeated(reps, m, inference.InferOptions{Inference: inference.Plain, Ensemble: true})
	if err != nil {
		t.Fatal(err)
	}
	check("plain without baselines", res, full, repFull, false)
}

// TestInferEnsembleRejects: repetitions that do not evaluate the same rows
// once each, or that lack reductions, are errors, not silent averages.
func TestInferEnsembleRejects(t *testing.T) {
	feats := []framework.Feature{{Name: "a", Columns: []int{0}}}
	m := measures.MSE()
	opt := inference.InferOptions{Inference: inference.Plain, Ensemble: true}
	for _, c := range []struct {
		name   string
		mutate func(reps []*inference.Reductions)
		want   string
	}{
		{"other rows", func(reps []*inference.Reductions) { reps[1].Folds[0].EvalRows[0] = 1000 }, "which the first does not"},
		{"row twice", func(reps []*inference.Reductions) { reps[0].Folds[0].EvalRows[0] = reps[0].Folds[1].EvalRows[0] }, "evaluated twice"},
		{"row twice in a later repetition", func(reps []*inference.Reductions) { reps[1].Folds[0].EvalRows[0] = reps[1].Folds[1].EvalRows[0] }, "evaluated twice in repetition 2"},
		{"no rows in a later repetition", func(reps []*inference.Reductions) { reps[1].Folds[1].EvalRows = nil }, "does not name its evaluation rows"},
		{"no rows", func(reps []*inference.Reductions) { reps[0].Folds[0].EvalRows = nil }, "does not name its evaluation rows"},
		{"skipped", func(reps []*inference.Reductions) { reps[1].Reduced[1][0][0].Pred = nil }, "no reduced predictions"},
	} {
		reps, _, _, _, _, _, _, _ := ensembleReps(rand.New(rand.NewPCG(1, 2)), 12, 2, 2, feats)
		c.mutate(reps)
		if _, err := inference.InferRepeated(reps, m, opt); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want one containing %q", c.name, err, c.want)
		}
	}
}

// unensembled is fixed declining the ensemble (framework.Ensembler), as
// permute does.
type unensembled struct{ fixed }

func (unensembled) Ensembles() bool { return false }

// declined returns the repetitions with their estimator declining the
// ensemble, the reductions shared.
func declined(reps []*inference.Reductions) []*inference.Reductions {
	out := make([]*inference.Reductions, len(reps))
	for i, r := range reps {
		c := *r
		c.Estimators = []framework.Estimator{unensembled{r.Estimators[0].(fixed)}}
		out[i] = &c
	}
	return out
}

// TestInferEnsembleDeclined: an estimator that declines the ensemble
// (a framework.Ensembler whose Ensembles is false) gets, under every
// ensembled option (debiased and bias-aware included), the results of the
// same repetitions without the ensemble (the mean of their own estimates,
// the spread added), with Combined saying so; those differ from the
// ensemble's, which its rows would otherwise have.
func TestInferEnsembleDeclined(t *testing.T) {
	feats := []framework.Feature{{Name: "a", Columns: []int{0}}, {Name: "b", Columns: []int{0}}}
	reps, _, _, _, _, _, _, _ := ensembleReps(rand.New(rand.NewPCG(3, 4)), 60, 3, 3, feats)
	dec := declined(reps)
	m := measures.MSE()
	for _, o := range []inference.InferOptions{
		{Inference: inference.Split, Ensemble: true},
		{Inference: inference.Plain, Ensemble: true, Debias: true},
		{Inference: inference.Plain, Ensemble: true, Debias: true, BiasAware: true},
		{Inference: inference.Perturbed, Ensemble: true, Debias: true},
	} {
		plain := o
		plain.Ensemble, plain.Debias, plain.BiasAware = false, false, false
		want, err := inference.InferRepeated(reps, m, plain)
		if err != nil {
			t.Fatal(err)
		}
		ens, err := inference.InferRepeated(reps, m, o)
		if err != nil {
			t.Fatal(err)
		}
		got, err := inference.InferRepeated(dec, m, o)
		if err != nil {
			t.Fatal(err)
		}
		for i, g := range got {
			w := want[i]
			if g.VI != w.VI || g.SE != w.SE || g.CILow != w.CILow || g.CIHigh != w.CIHigh || g.PValue != w.PValue || g.BiasBound != 0 {
				t.Errorf("%+v, %s: got %+v, want the unensembled %+v", o, g.Feature, g, w)
			}
			if g.Combined != inference.CombinedRepetitions || ens[i].Combined != "" {
				t.Errorf("%+v, %s: combined %q (the ensembled estimator's %q), want %q", o, g.Feature, g.Combined, ens[i].Combined, inference.CombinedRepetitions)
			}
			if g.VI == ens[i].VI {
				t.Errorf("%+v, %s: vi %g is the ensemble's: the check cannot tell them apart", o, g.Feature, g.VI)
			}
		}
	}
}
