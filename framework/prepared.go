package framework

import (
	"context"

	"gonum.org/v1/gonum/mat"
)

// PreparedPredictor is an optional interface of a JacobianMultiplier whose
// products on an input start with a pass the predictions share (for a
// network, the forward pass at the fitted parameters). PredictPrepared
// returns exactly Predict(x), and keeps what the model's Jacobian products
// on x need, so that the products on x that follow do not run that pass
// again. The lazy estimator at scale predicts the train rows for their
// residuals and then multiplies by their Jacobian: for an MLP the
// residuals' forward pass was a second copy of the products' (0.54 of
// about 5 GFLOP a feature on vi bench highdim n 10000, (200, 100), before
// the Krylov steps).
type PreparedPredictor interface {
	PredictPrepared(ctx context.Context, x mat.Matrix) (*mat.Dense, error)
}
