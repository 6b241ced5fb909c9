package mlp

import (
	"context"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
)

var (
	_ framework.PreparedPredictor = (*Model)(nil)
	_ framework.PreparedPredictor = single{}
)

// PredictPrepared returns Predict(x) from x's signals (the memo's, or
// computed and kept there: the forward pass at the fitted parameters,
// which Predict runs too, and the backward one), so that the Jacobian
// products on x that follow find them (framework.PreparedPredictor; signals
// larger than the memo's budget are computed and not kept). The
// forward pass is the same computation on the same parameters as
// Predict's, so the predictions are the same to the bit.
func (md *Model) PredictPrepared(ctx context.Context, x mat.Matrix) (*mat.Dense, error) {
	_, xg, err := md.trained.PredictArgs(ctx, "mlp", false, nil, x, md.inputs)
	if err != nil {
		return nil, err
	}
	out := append([]float64(nil), md.outputs(xg, md.cached(xg))...)
	md.head.Link(out, nil)
	return mat.NewDense(xg.Rows, md.head.Outs, out), nil
}

// PredictPrepared returns the predictions of x's float32 pass (the memo's,
// or run and kept there), the one the single-precision products on x use,
// so that the products that follow find it: each within about eps32 times
// the sum of the widths of Predict's, relative to the absolute signals
// (see pass32). A multiclass model's are Predict's, as its products are
// the float64 ones.
func (s single) PredictPrepared(ctx context.Context, x mat.Matrix) (*mat.Dense, error) {
	md := s.md
	if !md.singleRows() {
		return md.PredictPrepared(ctx, x)
	}
	_, xg, err := md.trained.PredictArgs(ctx, "mlp", false, nil, x, md.inputs)
	if err != nil {
		return nil, err
	}
	out := append([]float64(nil), md.singleOf(xg, md.cachedSingle(xg)).out...)
	md.head.Link(out, nil)
	return mat.NewDense(xg.Rows, md.head.Outs, out), nil
}
