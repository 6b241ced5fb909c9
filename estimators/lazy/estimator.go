package lazy

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/framework/jacobian"
	"github.com/lazyvi/lazyvi/internal/timing"
)

// Estimator is LazyVI (Algorithm 1 of Gao, Stevens, Willett, Raskutti). At
// the full model's parameters theta_f it takes the residuals e = y - h(X^(j)) of
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
// forms G = Phi^T Phi and Phi^T e once, by fold blocks (jacobian.Gram:
// the backend's Gram, or its Jacobian's), and solves
// (G + alpha I) dtheta = Phi^T e. Predictions at shifted parameters go to
// the backend in batches (jacobian.PredictShifts), in the dual form
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
// Lambda > 0 fixes alpha and skips the search, as does a model that says
// which penalty makes the reduction its own refit (framework.RefitPenalizer:
// least squares).
//
// Where the dense cross-validation does not fit (a system side above 3000
// or its bytes above Memory), or would cost several times a subsample's (a
// cross-validated system's side at least twice the subsample's, 2000 for
// one output: midScale), the penalty is chosen on a seeded subsample
// and rescaled or, where several outputs cap the subsample below 1000
// rows, on a held-out share of all the train rows by matrix-free Krylov
// solves (heldout.go), and the update solved once by the method a
// cost model picks, matrix-free Krylov on Jacobian products when the dense
// forms do not fit or cost more (scale.go, cost.go).
//
// The code is in files by job: this one reduces (the residuals, the
// reduced predictions; problem.go holds one reduction's ridge problem),
// search.go chooses the penalty, ridge.go and krylov.go solve the ridge
// systems, scale.go, heldout.go, precond.go and cost.go handle the sizes
// the dense forms do not fit.
type Estimator struct {
	// Folds is the number of cross-validation folds of the penalty
	// search; 0 means DefaultFolds.
	Folds int
	// Lambda, when positive, fixes the penalty instead of choosing it by
	// cross-validation.
	Lambda float64
	// Memory bounds the bytes one feature's ridge problem may hold (the
	// kernel, Gram, Jacobian or Krylov basis); 0 means DefaultMemory.
	// Problems whose dense form does not fit are solved matrix-free (see
	// scale.go).
	Memory int64
	// DoublePrecision, when set, keeps the matrix-free solves' Jacobian
	// products in float64 where the model also has single-precision ones
	// (framework.SinglePrecisioner), which they use otherwise: faster, and
	// their rounding (relative ~1e-7) is far below the solves' tolerance
	// (finalEnergyTol, 5e-3 of the objective's decrease), and the penalty
	// search at scale (the subsample's cross-validation) in float64 where
	// the model also has a single-precision kernel
	// (framework.SingleKerneler), which it uses otherwise (newRidge), and
	// the train rows' residuals at scale in float64 where the
	// single-precision view has its own predictions (PreparedPredictor:
	// the float32 pass its products use), which they come from otherwise.
	// The dense path's search at the paper's sizes, the dense solves and
	// the predictions on the evaluation rows are in float64 either way.
	DoublePrecision bool

	// cfg holds the constants that the package's benchmarks vary; the
	// zero config is lazy's own.
	cfg config
}

// DefaultFolds is the number of cross-validation folds for lazy's penalty
// when Estimator.Folds is 0: three folds cost less than five (each fold's
// system has 2/3 of the rows instead of 4/5, and there are fewer of them)
// and, on the paper's linear setting, choose penalties of the same
// accuracy.
const DefaultFolds = 3

// maxFolds bounds Estimator.Folds.
const maxFolds = 100

// Name returns "lazy".
func (Estimator) Name() string { return "lazy" }

// Describe implements framework.Describer.
func (Estimator) Describe() string {
	return "LazyVI: the full network shifted by a ridge regression on its gradients (needs a gradient backend)"
}

// Needs implements framework.Needer: the full model's gradients.
func (Estimator) Needs() framework.Capabilities { return framework.Capabilities{Gradients: true} }

// Settings implements framework.Configurer: folds, lambda, lazy-mem and
// lazy-precision.
func (e Estimator) Settings() []framework.OptionInfo {
	return []framework.OptionInfo{
		{Name: "folds", Default: strconv.Itoa(e.folds()), Usage: "cross-validation `folds` for lazy's ridge penalty"},
		{Name: "lambda", Default: strconv.FormatFloat(e.Lambda, 'g', -1, 64), Usage: "fix lazy's ridge penalty to `L` (0: choose it by cross-validation)"},
		{Name: "lazy-mem", Default: strconv.FormatInt(int64(e.memory())>>20, 10), Usage: "bound on the memory of lazy's ridge problem per worker, in `MiB` (larger problems are solved matrix-free)"},
		{Name: "lazy-precision", Default: e.precision(), Usage: "`precision` of lazy's work at scale (the matrix-free solves' Jacobian products, the penalty search's kernels, the train rows' residuals): single (where the backend has it, faster) or double"},
	}
}

// Configure implements framework.Configurer.
func (e Estimator) Configure(settings map[string]string) (framework.Estimator, error) {
	for k, v := range settings {
		switch k {
		case "folds":
			n, err := framework.ParseCount("folds", v, 2, maxFolds, "each fold of the penalty search needs rows of its own")
			if err != nil {
				return nil, err
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
				return nil, framework.Usagef("lazy-mem must be a whole number of MiB from 1 to %d, got %s", 1<<30, v)
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
func (e Estimator) FixedPenalty() (float64, bool) { return e.Lambda, e.Lambda > 0 }

// MinTrainRows implements pipeline.TrainRower: two rows per fold.
func (e Estimator) MinTrainRows() int { return 2 * e.folds() }

// precision is the lazy-precision setting's value.
func (e Estimator) precision() string {
	if e.DoublePrecision {
		return "double"
	}
	return "single"
}

func (e Estimator) folds() int {
	if e.Folds == 0 {
		return DefaultFolds
	}
	return e.Folds
}

// Summarize implements framework.Summarizer: "lambda", the geometric mean
// of the folds' finite penalties, or null with "no_update": true when
// every fold kept the full model.
func (Estimator) Summarize(stats []map[string]float64) []framework.Field {
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
// every feature.
func (lz Estimator) Baseline(ctx context.Context, p *framework.Problem) (framework.Reduced, error) {
	red, err := lz.reduce(ctx, p, framework.Feature{Name: "(baseline)"}, nil, true)
	return red, explainSingular(p, err)
}

// Reduce fits the lazy reduced model for feature f.
func (lz Estimator) Reduce(ctx context.Context, p *framework.Problem, f framework.Feature) (framework.Reduced, error) {
	red, err := lz.reduce(ctx, p, f, nil, false)
	return red, explainSingular(p, err)
}

// ReduceFrom implements framework.BaselineReducer: Reduce, where the
// penalty's search (on all the train rows, on the subsample or on the
// held-out rows) starts from the baseline's penalty, or at the top of the
// grid when the baseline chose no update (nearStart, searchNear: about 5
// candidates instead of 8-11).
func (lz Estimator) ReduceFrom(ctx context.Context, p *framework.Problem, f framework.Feature, base func() (framework.Reduced, error)) (framework.Reduced, error) {
	red, err := lz.reduce(ctx, p, f, base, false)
	return red, explainSingular(p, err)
}

// reduce is Reduce; baseline, when not nil, returns the baseline (see
// ReduceFrom); carry is set for the baseline itself, whose Reduced then
// carries what its features start from (reduceScaled).
func (lz Estimator) reduce(ctx context.Context, fp *framework.Problem, f framework.Feature, baseline func() (framework.Reduced, error), carry bool) (framework.Reduced, error) {
	g, ok := framework.As[framework.Gradienter](fp.Full)
	if !ok {
		return framework.Reduced{}, framework.Usagef("estimator lazy needs a backend with gradients; backend %q has none (use dropout or retrain)", fp.BackendName)
	}
	if r, ok := fp.Full.(framework.RefitPenalizer); ok && lz.Lambda <= 0 {
		// The model's refit is a ridge regression on these features:
		// its penalty, not a search.
		if l, exact := r.RefitPenalty(); exact && l > 0 {
			lz.Lambda = l
		}
	}
	dropped := fp.Drop(fp.XTrain, f)
	n1, _ := dropped.Dims()
	folds := lz.folds()
	if lz.Lambda <= 0 && (folds < 2 || n1 < 2*folds) {
		return framework.Reduced{}, framework.Usagef("estimator lazy: %d train rows are too few for %d cross-validation folds (need at least 2 folds of 2 rows)", n1, folds)
	}
	// K outputs: targets and residuals are stacked, row i*K + k.
	k := 1
	if fp.Task == framework.Multiclass {
		k = fp.Classes
	}
	scaled := lz.scaled(n1, k, g.NumParams())
	// Rows in fold order: fold k is rows bounds[k]..bounds[k+1].
	var order, bounds []int
	if lz.Lambda <= 0 && !scaled {
		for _, fold := range foldsOf(n1, folds, fp.Seed) {
			bounds = append(bounds, len(order))
			order = append(order, fold...)
		}
		bounds = append(bounds, n1)
	} else {
		order = allRows(n1)
	}
	x := dropped // the rows in their order: Drop's copy is the problem's own
	if bounds != nil {
		x = rowsOf(dropped, order)
	}
	xev := fp.Drop(fp.XEval, f)
	p := &problem{est: lz, g: g, x: x, k: k, seed: fp.Seed, stats: map[string]float64{}, sent: &inputs{g: g}}
	p.sent.add(p.x)
	p.sent.add(xev)
	// The model keeps what it computed from these rows (a network's
	// signals, the plugin transport's copies) for the calls that reuse
	// them; once the reduction is done none will, and the run's other
	// reductions need the room.
	defer p.sent.forget()
	stop := timing.From(ctx).Start(stageResiduals)
	if err := p.residuals(ctx, fp.YTrain, order, f, scaled); err != nil {
		return framework.Reduced{}, err
	}
	stop(passFlops(n1, g.NumParams()))
	if scaled {
		return p.reduceScaled(ctx, xev, baseline, carry)
	}
	return p.reduceDense(ctx, bounds, xev, baseline)
}

// residuals sets the problem's targets from the train responses y of its
// rows (order: the rows of x among y's, feature f dropped) and its
// residuals, the targets less the full model's predictions; prepared, when
// the products on these rows follow (at scale), lets a model that can keep
// what they need from the predictions' pass (the same predictions, or,
// where the products are in single precision and their view has its own
// prepared pass, that pass's: one float32 pass serves both).
func (p *problem) residuals(ctx context.Context, y []float64, order []int, f framework.Feature, prepared bool) error {
	n1, k := len(order), p.k
	p.targets = make([]float64, n1*k)
	for i, r := range order {
		if k == 1 {
			p.targets[i] = y[r]
		} else {
			p.targets[i*k+int(y[r])] = 1
		}
	}
	predict := p.g.Predict
	if pp, ok := jacobian.PreparedOf(p.g, p.single()); ok && prepared {
		predict = pp.PredictPrepared
	}
	base, err := predict(ctx, p.x)
	if err != nil {
		return fmt.Errorf("predict train split: %w", err)
	}
	if r, c := base.Dims(); r != n1 || c != k {
		return fmt.Errorf("predict train split: backend returned %d x %d predictions for %d rows, want %d x %d", r, c, n1, n1, k)
	}
	p.e = make([]float64, n1*k)
	floats.SubTo(p.e, p.targets, base.RawMatrix().Data)
	if i := slices.IndexFunc(p.e, func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }); i >= 0 {
		return fmt.Errorf("the full model's prediction for train row %d (feature %s dropped) is not finite", order[i/k]+1, f.Name)
	}
	return nil
}

// reduceDense is the reduction where the dense cross-validation fits: the
// rows of x are in fold order (fold f is rows bounds[f]..bounds[f+1]; nil
// for a fixed penalty), and xev is the dropped evaluation split. base,
// when not nil, returns the baseline, on the same rows and folds, whose
// penalty the search starts from (searchNear: about 5 candidates instead
// of the grid walk's 8-11).
func (p *problem) reduceDense(ctx context.Context, bounds []int, xev mat.Matrix, base func() (framework.Reduced, error)) (framework.Reduced, error) {
	rp, err := p.newRidge(ctx, bounds, false)
	if err != nil {
		return framework.Reduced{}, err
	}
	defer releaseRidge(rp)
	alpha := p.est.Lambda
	if alpha <= 0 {
		near, err := baselinePenalty(base)
		if err != nil {
			return framework.Reduced{}, err
		}
		alpha, err = p.chooseAlpha(ctx, rp, bounds, searchTol, near)
		if err != nil {
			return framework.Reduced{}, err
		}
	}
	p.stats[statLambda] = alpha
	if math.IsInf(alpha, 1) {
		return p.predictFull(ctx, xev)
	}
	stop := timing.From(ctx).Start(stageSolve)
	shift, err := rp.solveAll(ctx, alpha)
	if err != nil {
		return framework.Reduced{}, err
	}
	flops := 0.0
	if d, ok := rp.(*dual); ok && d.j != nil {
		flops = passFlops(p.samples()*p.k, p.g.NumParams()) // Phi^T a, by the Jacobian
	}
	stop(flops)
	return p.predictReduced(ctx, &shift, xev)
}

// baselinePenalty is the penalty of the baseline base returns (+Inf where
// it chose no update), or 0 without one (base nil, or a baseline without
// a penalty).
func baselinePenalty(base func() (framework.Reduced, error)) (float64, error) {
	if base == nil {
		return 0, nil
	}
	b, err := base()
	if err != nil {
		return 0, err
	}
	if l := b.Stats[statLambda]; l > 0 {
		return l, nil
	}
	return 0, nil
}

// predictFull is the reduced model where no update is made: the full
// model's predictions on the evaluation rows xev, with the problem's
// stats.
func (p *problem) predictFull(ctx context.Context, xev mat.Matrix) (framework.Reduced, error) {
	stop := timing.From(ctx).Start(stagePredict)
	pred, err := p.g.Predict(ctx, xev)
	if err != nil {
		return framework.Reduced{}, fmt.Errorf("predict evaluation split: %w", err)
	}
	n2, _ := xev.Dims()
	stop(passFlops(n2, p.g.NumParams()))
	return framework.Reduced{Pred: pred, Stats: p.stats}, nil
}
