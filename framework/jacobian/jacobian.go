// Package jacobian reaches a model's Jacobian products, Grams, kernels and
// shifted predictions through whichever of the framework's optional
// interfaces it implements, falling back on its Jacobian (or on one call
// per shift) where it implements none: what an estimator that linearises
// the model (lazy) calls, and what a backend may serve as its own
// implementation of an interface when it has nothing faster.
package jacobian

import (
	"context"
	"fmt"
	"runtime"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/internal/parallel"
)

// KernelInto is k's KernelInto when k is a framework.InPlaceKerneler,
// else k's Kernel (the result then in fresh memory).
func KernelInto(ctx context.Context, k framework.Kerneler, x1, x2 mat.Matrix, dst []float64) (*mat.Dense, error) {
	if ki, ok := k.(framework.InPlaceKerneler); ok {
		return ki.KernelInto(ctx, x1, x2, dst)
	}
	return k.Kernel(ctx, x1, x2)
}

// Products is JacobianMul (trans false) or JacobianTMul (trans true) from
// the Jacobian, whatever g implements: the fallback a backend with a small
// Jacobian may serve as its framework.JacobianMultiplier.
func Products(ctx context.Context, g framework.Gradienter, x mat.Matrix, v *mat.Dense, trans bool) (*mat.Dense, error) {
	j, err := g.Jacobian(ctx, x)
	if err != nil {
		return nil, fmt.Errorf("jacobian: %w", err)
	}
	r, m := j.Dims()
	vr, vc := v.Dims()
	want, op := m, mat.Matrix(j)
	if trans {
		want, op = r, j.T()
	}
	if vr != want {
		return nil, fmt.Errorf("jacobian product: %d x %d vectors for a %d x %d Jacobian (transposed: %v)", vr, vc, r, m, trans)
	}
	var out mat.Dense
	out.Mul(op, v)
	return &out, nil
}

// PredictShifts returns the predictions of every shift on g: by its
// framework.ShiftBatcher when it has one, else by concurrent PredictShifted
// calls (after JacobianTVec for a dual-form shift).
func PredictShifts(ctx context.Context, g framework.Gradienter, shifts []framework.Shift) ([]*mat.Dense, error) {
	if b, ok := framework.As[framework.ShiftBatcher](g); ok {
		return b.PredictShifts(ctx, shifts)
	}
	return PredictShiftsEach(ctx, g, shifts)
}

// PredictShiftsEach is PredictShifts one call per shift, on up to
// GOMAXPROCS goroutines, whatever g implements: the fallback a
// framework.ShiftBatcher may use itself. A model's call is CPU-bound, so
// more calls at once than processors would only hold more passes'
// memory at the same time.
func PredictShiftsEach(ctx context.Context, g framework.Gradienter, shifts []framework.Shift) ([]*mat.Dense, error) {
	out := make([]*mat.Dense, len(shifts))
	errs := make([]error, len(shifts))
	parallel.For(runtime.GOMAXPROCS(0), len(shifts), func(_, i int) {
		out[i], errs[i] = predictShiftSafe(ctx, g, shifts[i], i)
	})
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// predictShiftSafe is predictShift with a panic returned as shift i's
// error.
func predictShiftSafe(ctx context.Context, g framework.Gradienter, s framework.Shift, i int) (p *mat.Dense, err error) {
	defer func() {
		if r := recover(); r != nil {
			p, err = nil, fmt.Errorf("shift %d: panic: %v", i, r)
		}
	}()
	return predictShift(ctx, g, s)
}

func predictShift(ctx context.Context, g framework.Gradienter, s framework.Shift) (*mat.Dense, error) {
	dtheta := s.DTheta
	if s.XTrain != nil {
		k, ok := KernelerOf(g, s.Single)
		if !ok {
			return nil, framework.Usagef("a dual-form shift needs a model with kernels")
		}
		var err error
		if dtheta, err = k.JacobianTVec(ctx, s.XTrain, s.A); err != nil {
			return nil, fmt.Errorf("jacobian-vector product: %w", err)
		}
		if len(dtheta) != g.NumParams() {
			return nil, fmt.Errorf("jacobian-vector product: %d values for %d parameters", len(dtheta), g.NumParams())
		}
	}
	return g.PredictShifted(ctx, s.X, dtheta)
}

// Gram returns what framework.GramBuilder's Gram returns, for any
// framework.Gradienter: from the model's own Gram when it is a
// GramBuilder (G in dst's memory where the model takes it), else from its
// Jacobian (GramFromJacobian, in fresh memory).
func Gram(ctx context.Context, g framework.Gradienter, x mat.Matrix, e []float64, dst []float64) (*mat.SymDense, []float64, error) {
	if gr, ok := framework.As[framework.GramBuilder](g); ok {
		return gr.Gram(ctx, x, e, dst)
	}
	return GramFromJacobian(ctx, g, x, e)
}

// GramFromJacobian is Gram from the Jacobian (a symmetric rank-k update
// and a product), whatever g implements: the fallback a
// framework.GramBuilder may use itself. The Jacobian must have len(e) rows.
func GramFromJacobian(ctx context.Context, g framework.Gradienter, x mat.Matrix, e []float64) (*mat.SymDense, []float64, error) {
	j, err := g.Jacobian(ctx, x)
	if err != nil {
		return nil, nil, fmt.Errorf("jacobian: %w", err)
	}
	r, m := j.Dims()
	if r != len(e) || m != g.NumParams() {
		return nil, nil, fmt.Errorf("jacobian: %d x %d for %d residuals and %d parameters", r, m, len(e), g.NumParams())
	}
	gram := new(mat.SymDense)
	gram.SymOuterK(1, j.T())
	b := make([]float64, m)
	mat.NewVecDense(m, b).MulVec(j.T(), mat.NewVecDense(r, e))
	return gram, b, nil
}

// MultiplierOf is framework.As[framework.JacobianMultiplier] with the
// precision chosen: with single, the products of m's SinglePrecision when
// it is a framework.SinglePrecisioner, else m's own.
func MultiplierOf(m framework.Model, single bool) (framework.JacobianMultiplier, bool) {
	jm, ok := framework.As[framework.JacobianMultiplier](m)
	if !ok || !single {
		return jm, ok
	}
	if sp, ok := framework.As[framework.SinglePrecisioner](m); ok {
		return sp.SinglePrecision(), true
	}
	return jm, true
}

// PreparedOf is framework.As[framework.PreparedPredictor] with the
// precision chosen: with single, the PredictPrepared of m's
// SinglePrecision view when the view has one (the predictions of the
// single-precision pass its products use), else m's own.
func PreparedOf(m framework.Model, single bool) (framework.PreparedPredictor, bool) {
	if single {
		if sp, ok := framework.As[framework.SinglePrecisioner](m); ok {
			if pp, ok := sp.SinglePrecision().(framework.PreparedPredictor); ok {
				return pp, true
			}
		}
	}
	return framework.As[framework.PreparedPredictor](m)
}

// KernelerOf is framework.As[framework.Kerneler] with the precision
// chosen: with single, the Kerneler of m's SingleKernel when it is a
// framework.SingleKerneler, else m's own.
func KernelerOf(m framework.Model, single bool) (framework.Kerneler, bool) {
	k, ok := framework.As[framework.Kerneler](m)
	if !ok || !single {
		return k, ok
	}
	if sk, ok := framework.As[framework.SingleKerneler](m); ok {
		return sk.SingleKernel(), true
	}
	return k, true
}
