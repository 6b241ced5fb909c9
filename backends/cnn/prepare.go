package cnn

import (
	"context"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/backends/internal/nn"
	"github.com/lazyvi/lazyvi/framework"
)

var (
	_ framework.PreparedPredictor = (*Model)(nil)
	_ framework.Forgetter         = (*Model)(nil)
)

// Forget implements framework.Forgetter: the memo drops the passes of xs
// now, the caller being done with them.
func (md *Model) Forget(xs ...mat.Matrix) { md.memo.ForgetAll(xs) }

// PredictPrepared returns Predict(x) from x's forward passes at the fitted
// parameters, kept in the memo for the Jacobian products on x that follow
// (framework.PreparedPredictor); when they do not fit the memo's budget,
// from Predict itself. The passes run the same computation on each sample
// as Predict's, so the predictions are the same to the bit.
func (md *Model) PredictPrepared(ctx context.Context, x mat.Matrix) (*mat.Dense, error) {
	theta, xg, err := md.trained.PredictArgs(ctx, "cnn", false, nil, x, md.inputs)
	if err != nil {
		return nil, err
	}
	if md.passBytes(xg) > nn.MemoBudget {
		return md.predict(theta, xg), nil
	}
	ps, err := md.passesOf(ctx, "PredictPrepared", xg)
	if err != nil {
		return nil, err
	}
	outs := md.head.Outs
	out := make([]float64, 0, xg.Rows*outs)
	for _, p := range ps.blocks {
		out = append(out, p.out[:p.n*outs]...)
	}
	md.head.Link(out, nil)
	return mat.NewDense(xg.Rows, outs, out), nil
}
