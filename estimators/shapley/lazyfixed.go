package shapley

import (
	"context"
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
)

// lazyFixed is the lazy reduced model with a fixed penalty alpha on the
// dual side, computed with exactly the calls it needs: with X_S the train
// split with the features outside S zeroed,
//
//	e = y - h(X_S),  K = Phi(X_S) Phi(X_S)^T (the backend's structured kernel),
//	a = (K + alpha I)^-1 e (Cholesky),  dtheta = Phi(X_S)^T a,
//
// and the network at theta_f + dtheta on the evaluation split. That is
// estimators.Lazy.Reduce with Problem.Lambda = alpha (tested to agree),
// without the n1 x M Jacobian that Lazy fetches for its cross-validation
// (52 MB per subset on the appendix setting). It applies when the backend
// has the structured kernel and n1 <= M; otherwise Estimate calls the
// registered estimator.
type lazyFixed struct {
	g     framework.Gradienter
	k     framework.Kerneler
	alpha float64
}

// newLazyFixed returns the fast path for red on prob, or nil when it does
// not apply.
func newLazyFixed(prob *framework.Problem, red framework.Estimator) *lazyFixed {
	if red.Name() != "lazy" || !(prob.Lambda > 0) {
		return nil
	}
	g, ok := prob.Full.(framework.Gradienter)
	if !ok {
		return nil
	}
	k, ok := prob.Full.(framework.Kerneler)
	if !ok {
		return nil
	}
	if n1, _ := prob.XTrain.Dims(); n1 > g.NumParams() {
		return nil
	}
	return &lazyFixed{g: g, k: k, alpha: prob.Lambda}
}

func (lf *lazyFixed) Name() string { return "lazy" }

func (lf *lazyFixed) Reduce(ctx context.Context, p *framework.Problem, f framework.Feature) (framework.Reduced, error) {
	xtr := p.Drop(p.XTrain, f)
	base, err := lf.g.Predict(ctx, xtr)
	if err != nil {
		return framework.Reduced{}, fmt.Errorf("predict train split: %w", err)
	}
	n, _ := xtr.Dims()
	e := make([]float64, n)
	for i := range e {
		e[i] = p.YTrain[i] - base.At(i, 0)
	}
	k, err := lf.k.Kernel(ctx, xtr, nil)
	if err != nil {
		return framework.Reduced{}, fmt.Errorf("kernel: %w", err)
	}
	s := mat.NewSymDense(n, nil)
	for i := range n {
		for j := i; j < n; j++ {
			v := 0.5 * (k.At(i, j) + k.At(j, i))
			if i == j {
				v += lf.alpha
			}
			s.SetSym(i, j, v)
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(s) {
		return framework.Reduced{}, fmt.Errorf("ridge system (%d x %d, alpha %g) is not positive definite", n, n, lf.alpha)
	}
	a := mat.NewVecDense(n, nil)
	if err := ch.SolveVecTo(a, mat.NewVecDense(n, e)); err != nil {
		return framework.Reduced{}, fmt.Errorf("ridge solve: %w", err)
	}
	dtheta, err := lf.k.JacobianTVec(ctx, xtr, a.RawVector().Data)
	if err != nil {
		return framework.Reduced{}, fmt.Errorf("jacobian-vector product: %w", err)
	}
	pred, err := lf.g.PredictShifted(ctx, p.Drop(p.XEval, f), dtheta)
	if err != nil {
		return framework.Reduced{}, fmt.Errorf("predict evaluation split at shifted parameters: %w", err)
	}
	return framework.Reduced{Pred: pred, Lambda: lf.alpha}, nil
}
