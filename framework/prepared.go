package framework

import (
	"context"

	"gonum.org/v1/gonum/mat"
)

// PreparedPredictor is an optional interface of a JacobianMultiplier whose
// products on an input start with a pass the predictions share (for a
// network, the forward pass at the fitted parameters). A model's
// PredictPrepared returns exactly Predict(x) (a single-precision view's,
// SinglePrecisioner's, those of its own pass), and keeps what the
// Jacobian products on x need, so that the products on x that follow do
// not run that pass again. The lazy estimator at scale predicts the train rows for their
// residuals and then multiplies by their Jacobian: without it, a network
// runs the same forward pass twice, a large share of a feature's work
// before its Krylov steps.
type PreparedPredictor interface {
	PredictPrepared(ctx context.Context, x mat.Matrix) (*mat.Dense, error)
}

// Forgetter is the optional interface of a model that keeps what it
// computed from its inputs beyond the call (a network's signals on recent
// inputs, which its Jacobian products and kernels on the same rows share;
// the plugin transport's request matrices, which it need not send again).
// Forget tells it that the caller is done with the inputs xs: what it
// keeps of them goes now, instead of when a budget needs the room, so that
// a long run keeps what its reductions in flight use and not the inputs of
// those already done. It changes no answer: a later call on the same
// values computes what it needs again. It is best effort and returns no
// error (a remote model that cannot be told keeps them longer).
type Forgetter interface {
	Forget(xs ...mat.Matrix)
}

// Holder is the optional interface of a Forgetter that can take its
// caller's word that inputs keep their values: Hold tells it that xs do
// not change until the caller's Forget of them, so that the calls on them
// in between find what it keeps of them without reading their values
// again (a network's memo compares each call's input with its own copy,
// at thousands of rows a tenth of a Jacobian product). It changes no
// answer where the word is kept; a caller that changes a held input, or
// frees it without Forget, may get another input's values.
type Holder interface {
	Hold(xs ...mat.Matrix)
}
