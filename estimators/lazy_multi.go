package estimators

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
)

// reduceMulti is Lazy for a Multiclass problem (K class probabilities per
// sample). The K-dimensional residual e_i = onehot(y_i) - p(x_i^(j)) of the
// full network on the dropped train split is regressed, jointly over the
// K outputs, on the per-output gradient features: stacking the samples'
// K rows (row i*K + k: e_ik and d p_k(x_i^(j)) / d theta, the Gradienter's
// multiclass Jacobian),
//
//	dtheta = argmin_w sum_i sum_k (e_ik - Phi_ik w)^2 + alpha ||w||^2,
//
// one shift of the shared parameters for all classes, and the reduced model
// is the network at theta_f + dtheta (its softmax keeps the predictions
// probabilities). This is the squared-error (Brier) linearisation, as the
// binary case regresses y - P(Y = 1); it treats the K rows of a sample as
// independent and does not weight them by the softmax covariance.
//
// The penalty is chosen by K-fold cross-validation over samples (a
// sample's K rows stay together) on a grid of log10(alpha / mean diag)
// from -6 to 3 in steps of 1, with "no update" (alpha = infinity) as a
// candidate, each scored by the held-out Brier error of the shifted
// network; Problem.Lambda > 0 fixes it. The solve is primal (M x M Gram)
// or dual (nK x nK kernel), whichever is smaller, from one symmetric
// eigendecomposition per fold. The Jacobian (n1 K x M) is formed: this is
// for small networks; lazy-es is the estimator for large ones.
func reduceMulti(ctx context.Context, p *framework.Problem, f framework.Feature) (framework.Reduced, error) {
	g, ok := p.Full.(framework.Gradienter)
	if !ok {
		return framework.Reduced{}, framework.Usagef("estimator lazy needs a backend with gradients; backend %q has none (use dropout, retrain or lazy-es)", p.BackendName)
	}
	K := p.Classes
	xtr := p.Drop(p.XTrain, f)
	n, _ := xtr.Dims()
	base, err := g.Predict(ctx, xtr)
	if err != nil {
		return framework.Reduced{}, fmt.Errorf("predict train split: %w", err)
	}
	if r, c := base.Dims(); r != n || c != K {
		return framework.Reduced{}, fmt.Errorf("predict train split: backend returned %d x %d for %d rows and %d classes", r, c, n, K)
	}
	e := make([]float64, n*K)
	for i := 0; i < n; i++ {
		for k := 0; k < K; k++ {
			e[i*K+k] = -base.At(i, k)
		}
		e[i*K+int(p.YTrain[i])]++
	}
	j, err := g.Jacobian(ctx, xtr)
	if err != nil {
		return framework.Reduced{}, fmt.Errorf("jacobian: %w", err)
	}
	M := g.NumParams()
	if r, c := j.Dims(); r != n*K || c != M {
		return framework.Reduced{}, fmt.Errorf("jacobian: backend returned %d x %d for %d rows x %d classes and %d parameters", r, c, n, K, M)
	}
	alpha := p.Lambda
	if alpha <= 0 {
		if alpha, err = multiAlpha(ctx, g, j, e, xtr, p.YTrain, K, p.Folds, p.Seed); err != nil {
			return framework.Reduced{}, err
		}
	}
	xev := p.Drop(p.XEval, f)
	if math.IsInf(alpha, 1) {
		pred, err := g.Predict(ctx, xev)
		if err != nil {
			return framework.Reduced{}, fmt.Errorf("predict evaluation split: %w", err)
		}
		return framework.Reduced{Pred: pred, Lambda: alpha}, nil
	}
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	s, err := newMultiSolver(j, e, all, K)
	if err != nil {
		return framework.Reduced{}, err
	}
	pred, err := g.PredictShifted(ctx, xev, s.solve(alpha))
	if err != nil {
		return framework.Reduced{}, fmt.Errorf("predict evaluation split at shifted parameters: %w", err)
	}
	return framework.Reduced{Pred: pred, Lambda: alpha}, nil
}

// multiSolver solves the stacked ridge problem on a subset of samples for
// any alpha from one eigendecomposition.
type multiSolver struct {
	dual  bool
	vecs  *mat.Dense // eigenvectors
	vals  []float64
	proj  []float64  // V^T r (r = e in dual form, J^T e in primal)
	jt    *mat.Dense // the subset's Jacobian rows (dual: dtheta = J^T a)
	trace float64    // trace of the Gram / kernel
}

func newMultiSolver(j *mat.Dense, e []float64, rows []int, K int) (*multiSolver, error) {
	_, m := j.Dims()
	var stacked []int
	for _, r := range rows {
		for k := 0; k < K; k++ {
			stacked = append(stacked, r*K+k)
		}
	}
	js := multiRows(j, stacked)
	es := make([]float64, len(stacked))
	for i, r := range stacked {
		es[i] = e[r]
	}
	s := &multiSolver{dual: len(stacked) <= m, jt: js}
	var sym mat.SymDense
	var rhs []float64
	if s.dual {
		sym.SymOuterK(1, js)
		rhs = es
	} else {
		sym.SymOuterK(1, js.T())
		rhs = make([]float64, m)
		mat.NewVecDense(m, rhs).MulVec(js.T(), mat.NewVecDense(len(es), es))
	}
	var eig mat.EigenSym
	if !eig.Factorize(&sym, true) {
		return nil, fmt.Errorf("lazy (multiclass): eigendecomposition failed")
	}
	s.vals = eig.Values(nil)
	s.vecs = new(mat.Dense)
	eig.VectorsTo(s.vecs)
	s.proj = make([]float64, len(rhs))
	mat.NewVecDense(len(rhs), s.proj).MulVec(s.vecs.T(), mat.NewVecDense(len(rhs), rhs))
	for _, v := range s.vals {
		s.trace += v
	}
	return s, nil
}

// solve returns dtheta for the penalty alpha.
func (s *multiSolver) solve(alpha float64) []float64 {
	c := make([]float64, len(s.proj))
	for i, v := range s.proj {
		c[i] = v / (math.Max(s.vals[i], 0) + alpha)
	}
	x := make([]float64, len(c))
	mat.NewVecDense(len(x), x).MulVec(s.vecs, mat.NewVecDense(len(c), c))
	if !s.dual {
		return x
	}
	_, m := s.jt.Dims()
	out := make([]float64, m)
	mat.NewVecDense(m, out).MulVec(s.jt.T(), mat.NewVecDense(len(x), x))
	return out
}

// multiAlpha chooses the penalty by cross-validation over samples.
func multiAlpha(ctx context.Context, g framework.Gradienter, j *mat.Dense, e []float64, x *mat.Dense, y []float64, K, folds int, seed int64) (float64, error) {
	n, _ := x.Dims()
	perm := rand.New(rand.NewPCG(uint64(seed), multiFoldStream)).Perm(n)
	held := make([][]int, folds)
	for i, r := range perm {
		held[i%folds] = append(held[i%folds], r)
	}
	grid := []float64{-6, -5, -4, -3, -2, -1, 0, 1, 2, 3}
	errs := make([]float64, len(grid))
	var noUpdate float64
	for _, v := range e {
		noUpdate += v * v
	}
	var scale float64
	for fi, h := range held {
		slices.Sort(h)
		train := multiComplement(n, h)
		s, err := newMultiSolver(j, e, train, K)
		if err != nil {
			return 0, err
		}
		if fi == 0 {
			scale = s.trace / float64(len(train))
			if !(scale > 0) {
				return math.Inf(1), nil
			}
		}
		xh := multiRows(x, h)
		for gi, t := range grid {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
			pred, err := g.PredictShifted(ctx, xh, s.solve(scale*math.Pow(10, t)))
			if err != nil {
				return 0, fmt.Errorf("cross-validation predict: %w", err)
			}
			for r, row := range h {
				for k := 0; k < K; k++ {
					want := 0.0
					if int(y[row]) == k {
						want = 1
					}
					d := want - pred.At(r, k)
					errs[gi] += d * d
				}
			}
		}
	}
	best, bestErr := math.Inf(1), noUpdate
	for gi, v := range errs {
		if v < bestErr {
			best, bestErr = scale*math.Pow(10, grid[gi]), v
		}
	}
	return best, nil
}

func multiRows(x *mat.Dense, rows []int) *mat.Dense {
	_, c := x.Dims()
	out := mat.NewDense(len(rows), c, nil)
	for i, r := range rows {
		out.SetRow(i, x.RawRowView(r))
	}
	return out
}

// multiFoldStream is the second PCG word of the folds' permutation.
const multiFoldStream = 0x6d756c7469 // "multi"

func multiComplement(n int, held []int) []int {
	in := make([]bool, n)
	for _, r := range held {
		in[r] = true
	}
	out := make([]int, 0, n-len(held))
	for i := range n {
		if !in[i] {
			out = append(out, i)
		}
	}
	return out
}
