package estimators

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
)

// Lazy is LazyVI (Algorithm 1 of Gao, Stevens, Willett, Raskutti). At the
// full model's parameters theta_f it takes the residuals e = y - h(X^(j)) of
// the full network on the dropped train split and the gradient features
// Phi = d h(X^(j)) / d theta, solves the ridge regression
//
//	dtheta = argmin_w ||e - Phi w||^2 + alpha ||w||^2
//
// and reports the network itself at theta_f + dtheta on the dropped
// evaluation split. The penalty is unnormalised (sklearn's Ridge(alpha)
// scale); the output bias is a parameter, so no separate intercept is fitted.
//
// With K classes (Task Multiclass) the K-dimensional residual
// onehot(y) - p(x^(j)) is regressed, jointly over the outputs, on the
// per-output gradient features: samples contribute K stacked rows (row
// i*K + k: e_ik and d p_k(x_i^(j)) / d theta, the Gradienter's multiclass
// Jacobian), one shift of the shared parameters serves all classes, and the
// network's softmax keeps the reduced predictions probabilities. This is the
// squared-error (Brier) linearisation, as the binary case regresses
// y - P(Y = 1); the K rows of a sample are not weighted by the softmax
// covariance. Folds keep a sample's rows together.
//
// Dual or primal, whichever side is smaller: with n1 <= M it works with the
// NTK Gram K = Phi Phi^T (from the backend's Kerneler when it has one,
// without the Jacobian) and dtheta = Phi^T (K + alpha I)^-1 e; with M < n1 it
// forms G = Phi^T Phi and Phi^T e once, by fold blocks (framework.GramOf:
// the backend's Gram, or its Jacobian's), and solves
// (G + alpha I) dtheta = Phi^T e. Predictions at shifted parameters go to
// the backend in batches (framework.PredictShifts), in the dual form
// theta_f + Phi^T a when it has kernels, so that behind the plugin
// transport neither the Jacobian nor the M-vectors cross.
//
// alpha is chosen per feature by K-fold cross-validation on the train split
// (folds seeded from the run's seed, the same for every feature): each
// candidate is scored by the squared error of h_{theta_f + dtheta_k} on the
// held-out fold k, dtheta_k fitted on the other folds from one Lanczos
// basis per fold that serves every candidate (see krylov; it grows only as
// far as the penalties asked for need, a few dozen steps for the useful
// ones, instead of a factorization of the fold's system). The rows are put
// in fold order first, so that each fold is a contiguous block: the other
// folds' system is K without a block of rows and columns, used in place.
// The search runs over log10(alpha / mean diag K): down a grid from 4 to -8
// in steps of 2 until the error rises below the best point (twice while the
// best is the top one; widening to -16 and 8 when the best is at an edge),
// then refines by Brent's method around the best grid point.
// "No update" (alpha = infinity: the full model, i.e. dropout) is a
// candidate too; when it wins, the reduction's "lambda" stat is +Inf.
// Lambda > 0 fixes alpha and skips the search.
//
// Where the dense cross-validation does not fit (a system side above 3000
// or its bytes above Memory), or would cost several times a subsample's (a
// cross-validated system's side at least twice the subsample's, 2000 for
// one output: midScale), the penalty is chosen on a seeded subsample
// and rescaled or, where several outputs cap the subsample below 1000
// rows, on a held-out share of all the train rows by matrix-free Krylov
// solves (lazy_heldout.go), and the update solved once by the method a
// cost model picks, matrix-free Krylov on Jacobian products when the dense
// forms do not fit or cost more (lazy_scale.go, lazy_cost.go).
//
// The code is in six files by job: this one reduces (the residuals, the
// ridge problem, the reduced predictions), lazy_search.go chooses the
// penalty, lazy_ridge.go solves the ridge systems, lazy_scale.go,
// lazy_heldout.go and lazy_cost.go handle the sizes the dense forms do not
// fit.
type Lazy struct {
	// Folds is the number of cross-validation folds of the penalty
	// search; 0 means DefaultFolds.
	Folds int
	// Lambda, when positive, fixes the penalty instead of choosing it by
	// cross-validation.
	Lambda float64
	// Memory bounds the bytes one feature's ridge problem may hold (the
	// kernel, Gram, Jacobian or Krylov basis); 0 means DefaultMemory.
	// Problems whose dense form does not fit are solved matrix-free (see
	// lazy_scale.go).
	Memory int64
	// DoublePrecision, when set, keeps the matrix-free solves' Jacobian
	// products in float64 where the model also has single-precision ones
	// (framework.SinglePrecisioner), which they use otherwise: about 1.45x
	// as fast, and their rounding (relative ~1e-7) is far below the
	// solves' tolerance (energyTol, 1e-2 of the objective's decrease;
	// the VIs moved by at most 5e-5 of their standard errors), and the
	// penalty search at scale (the subsample's cross-validation) in
	// float64 where the model also has a single-precision kernel
	// (framework.SingleKerneler), which it uses otherwise (newRidgeOf).
	// The dense path's search at the paper's sizes, the dense solves and
	// the predictions are in float64 either way (docs/performance.md,
	// Stops 26 and 27).
	DoublePrecision bool
}

// DefaultFolds is the number of cross-validation folds for lazy's penalty
// when Lazy.Folds is 0. Three folds instead of five cut lazy's cost by
// 2-2.5x (one factorization of (2/3 n1)^3 per fold instead of (4/5 n1)^3)
// with the same accuracy: 100 repetitions of the linear setting (rho 0.9,
// n 2000) gave the same bias to 1e-4 and the same coverage within 0.01.
const DefaultFolds = 3

// Name returns "lazy".
func (Lazy) Name() string { return "lazy" }

// Describe implements framework.Describer.
func (Lazy) Describe() string {
	return "LazyVI: the full network shifted by a ridge regression on its gradients (needs a gradient backend)"
}

// Needs implements framework.Needer: the full model's gradients.
func (Lazy) Needs() framework.Capabilities { return framework.Capabilities{Gradients: true} }

// Settings implements framework.Configurer: folds, lambda, lazy-mem and
// lazy-precision.
func (e Lazy) Settings() []framework.OptionInfo {
	return []framework.OptionInfo{
		{Name: "folds", Default: strconv.Itoa(e.folds()), Usage: "cross-validation `folds` for lazy's ridge penalty"},
		{Name: "lambda", Default: strconv.FormatFloat(e.Lambda, 'g', -1, 64), Usage: "fix lazy's ridge penalty to `L` (0: choose it by cross-validation)"},
		{Name: "lazy-mem", Default: strconv.FormatInt(int64(e.memory())>>20, 10), Usage: "bound on the memory of lazy's ridge problem per worker, in `MiB` (larger problems are solved matrix-free)"},
		{Name: "lazy-precision", Default: e.precision(), Usage: "`precision` of lazy's work at scale (the matrix-free solves' Jacobian products, the penalty search's kernels): single (where the backend has it, faster) or double"},
	}
}

// Configure implements framework.Configurer.
func (e Lazy) Configure(settings map[string]string) (framework.Estimator, error) {
	for k, v := range settings {
		switch k {
		case "folds":
			n, err := strconv.Atoi(v)
			if err != nil || n < 2 {
				return nil, framework.Usagef("folds must be at least 2, got %s", v)
			}
			e.Folds = n
		case "lambda":
			l, err := strconv.ParseFloat(v, 64)
			if err != nil || !(l >= 0) || math.IsInf(l, 1) {
				return nil, framework.Usagef("lambda must be >= 0 (0: by cross-validation), got %s", v)
			}
			e.Lambda = l
		case "lazy-mem":
			mb, err := strconv.ParseInt(v, 10, 64)
			if err != nil || mb < 1 || mb > 1<<30 {
				return nil, framework.Usagef("lazy-mem must be a positive number of MiB, got %s", v)
			}
			e.Memory = mb << 20
		case "lazy-precision":
			if v != "single" && v != "double" {
				return nil, framework.Usagef("lazy-precision must be single or double, got %s", v)
			}
			e.DoublePrecision = v == "double"
		default:
			return nil, framework.Usagef("%s is not a setting of estimator lazy (settings: folds, lambda, lazy-mem, lazy-precision)", k)
		}
	}
	return e, nil
}

// FixedPenalty returns Lambda when it fixes the penalty.
func (e Lazy) FixedPenalty() (float64, bool) { return e.Lambda, e.Lambda > 0 }

// MinTrainRows implements pipeline.TrainRower: two rows per fold.
func (e Lazy) MinTrainRows() int { return 2 * e.folds() }

// precision is the lazy-precision setting's value.
func (e Lazy) precision() string {
	if e.DoublePrecision {
		return "double"
	}
	return "single"
}

func (e Lazy) folds() int {
	if e.Folds == 0 {
		return DefaultFolds
	}
	return e.Folds
}

// Summarize implements framework.Summarizer: "lambda", the geometric mean
// of the folds' finite penalties, or null with "no_update": true when
// every fold kept the full model.
func (Lazy) Summarize(stats []map[string]float64) []framework.Field {
	var logSum float64
	var finite, inf int
	for _, s := range stats {
		switch l := s[statLambda]; {
		case math.IsInf(l, 1):
			inf++
		case l > 0:
			logSum += math.Log(l)
			finite++
		}
	}
	var out []framework.Field
	switch {
	case len(stats) > 0 && inf == len(stats):
		out = []framework.Field{{Key: "lambda", Value: nil}, {Key: "no_update", Value: true}}
	case finite > 0:
		out = []framework.Field{{Key: "lambda", Value: math.Exp(logSum / float64(finite))}}
	}
	return append(out, scaleFields(stats)...)
}

// statLambda is the Reduced.Stats key of the penalty used (+Inf: no update).
const statLambda = "lambda"

// Baseline implements framework.Baseliner: the same linearised refit with
// no feature removed. At a full network trained to the training loss's
// minimum it is the full model (the residuals have nothing left for the
// gradient features to fit); at an early-stopped one the refit improves it,
// and without the baseline that improvement would count as importance of
// every feature (on vi bench highdim at n 1000 it shifted every VI by about
// -0.85).
func (lz Lazy) Baseline(ctx context.Context, p *framework.Problem) (framework.Reduced, error) {
	return lz.reduce(ctx, p, framework.Feature{Name: "(baseline)"}, nil, true)
}

// Reduce fits the lazy reduced model for feature f.
func (lz Lazy) Reduce(ctx context.Context, p *framework.Problem, f framework.Feature) (framework.Reduced, error) {
	return lz.reduce(ctx, p, f, nil, false)
}

// ReduceFrom implements framework.BaselineReducer: Reduce, where at scale
// the penalty's search (on the subsample or the held-out rows) starts from
// the baseline's penalty, or at the top of the grid when the baseline
// chose no update (nearStart, searchNear: about 5 candidates instead of
// 8-11). At the paper's sizes (the dense path) it is Reduce and does not
// wait for the baseline.
func (lz Lazy) ReduceFrom(ctx context.Context, p *framework.Problem, f framework.Feature, base func() (framework.Reduced, error)) (framework.Reduced, error) {
	return lz.reduce(ctx, p, f, base, false)
}

// reduce is Reduce; baseline, when not nil, returns the baseline (see
// ReduceFrom); carry is set for the baseline itself, whose Reduced then
// carries what its features start from (reduceScaled).
func (lz Lazy) reduce(ctx context.Context, p *framework.Problem, f framework.Feature, baseline func() (framework.Reduced, error), carry bool) (framework.Reduced, error) {
	g, ok := framework.AsGradienter(p.Full)
	if !ok {
		return framework.Reduced{}, framework.Usagef("estimator lazy needs a backend with gradients; backend %q has none (use dropout or retrain)", p.BackendName)
	}
	dropped := p.Drop(p.XTrain, f)
	n1, _ := dropped.Dims()
	folds := lz.folds()
	if lz.Lambda <= 0 && (folds < 2 || n1 < 2*folds) {
		return framework.Reduced{}, framework.Usagef("estimator lazy: %d train rows are too few for %d cross-validation folds (need at least 2 folds of 2 rows)", n1, folds)
	}
	// K outputs: targets and residuals are stacked, row i*K + k.
	k := 1
	if p.Task == framework.Multiclass {
		k = p.Classes
	}
	scaled := lz.scaled(n1, k, g.NumParams())
	// Rows in fold order: fold k is rows bounds[k]..bounds[k+1].
	var order, bounds []int
	if lz.Lambda <= 0 && !scaled {
		for _, fold := range foldsOf(n1, folds, p.Seed) {
			bounds = append(bounds, len(order))
			order = append(order, fold...)
		}
		bounds = append(bounds, n1)
	} else {
		order = allRows(n1)
	}
	x := rowsOf(dropped, order)
	targets := make([]float64, n1*k)
	for i, r := range order {
		if k == 1 {
			targets[i] = p.YTrain[r]
		} else {
			targets[i*k+int(p.YTrain[r])] = 1
		}
	}
	// At scale the products on these rows follow: a model that can keeps
	// what they need from the predictions' pass (the same predictions).
	predict := g.Predict
	if pp, ok := framework.AsPreparedPredictor(g); ok && scaled {
		predict = pp.PredictPrepared
	}
	base, err := predict(ctx, x)
	if err != nil {
		return framework.Reduced{}, fmt.Errorf("predict train split: %w", err)
	}
	if r, c := base.Dims(); r != n1 || c != k {
		return framework.Reduced{}, fmt.Errorf("predict train split: backend returned %d x %d predictions for %d rows, want %d x %d", r, c, n1, n1, k)
	}
	e := make([]float64, n1*k)
	floats.SubTo(e, targets, base.RawMatrix().Data)
	if i := slices.IndexFunc(e, func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }); i >= 0 {
		return framework.Reduced{}, fmt.Errorf("the full model's prediction for train row %d (feature %s dropped) is not finite", order[i/k]+1, f.Name)
	}
	if scaled {
		return lz.reduceScaled(ctx, g, p, f, x, targets, e, k, baseline, carry)
	}
	rp, err := newRidge(ctx, g, x, e, k, bounds)
	if err != nil {
		return framework.Reduced{}, err
	}

	alpha := lz.Lambda
	if alpha <= 0 {
		alpha, err = chooseAlpha(ctx, g, rp, targets, e, bounds, k, searchTol, 0)
		if err != nil {
			return framework.Reduced{}, err
		}
	}
	xev := p.Drop(p.XEval, f)
	if math.IsInf(alpha, 1) {
		pred, err := g.Predict(ctx, xev)
		if err != nil {
			return framework.Reduced{}, fmt.Errorf("predict evaluation split: %w", err)
		}
		return framework.Reduced{Pred: pred, Stats: map[string]float64{statLambda: alpha}}, nil
	}
	shift, err := rp.solveAll(ctx, alpha)
	if err != nil {
		return framework.Reduced{}, err
	}
	return predictReduced(ctx, g, &shift, xev, map[string]float64{statLambda: alpha})
}

// predictReduced is the reduced model: the network's predictions on the
// evaluation rows xev at the shifted parameters, with the estimator's
// stats.
func predictReduced(ctx context.Context, g framework.Gradienter, shift *framework.Shift, xev mat.Matrix, stats map[string]float64) (framework.Reduced, error) {
	shift.X = xev
	preds, err := framework.PredictShifts(ctx, g, []framework.Shift{*shift})
	if err == nil && len(preds) != 1 {
		err = fmt.Errorf("%d predictions for one shift", len(preds))
	}
	if err != nil {
		return framework.Reduced{}, fmt.Errorf("predict evaluation split at shifted parameters: %w", err)
	}
	return framework.Reduced{Pred: preds[0], Stats: stats}, nil
}

// foldSeedPerturb is the second word of the folds' PCG seed.
const foldSeedPerturb = 0x1a2f01d5

// foldsOf splits 0..n-1 into k seeded folds of near-equal size, each sorted.
func foldsOf(n, k int, seed int64) [][]int {
	perm := rand.New(rand.NewPCG(uint64(seed), foldSeedPerturb)).Perm(n)
	folds := make([][]int, k)
	for i, r := range perm {
		folds[i%k] = append(folds[i%k], r)
	}
	for _, f := range folds {
		slices.Sort(f)
	}
	return folds
}

func rowsOf(x *mat.Dense, rows []int) *mat.Dense {
	_, c := x.Dims()
	out := mat.NewDense(len(rows), c, nil)
	for i, r := range rows {
		out.SetRow(i, x.RawRowView(r))
	}
	return out
}

func allRows(n int) []int {
	r := make([]int, n)
	for i := range r {
		r[i] = i
	}
	return r
}
