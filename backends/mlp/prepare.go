package mlp

import (
	"context"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
)

var _ framework.PreparedPredictor = (*Model)(nil)

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
	out := append([]float64(nil), md.cached(xg).acts.out...)
	md.head.Link(out, nil)
	return mat.NewDense(xg.Rows, md.head.Outs, out), nil
}
