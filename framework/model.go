package framework

import (
	"context"
	"fmt"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// Task is the kind of prediction problem.
type Task int

const (
	// Regression: a real-valued response; predictions are means.
	Regression Task = iota
	// Binary: a 0/1 response; predictions are P(Y = 1).
	Binary
	// Multiclass: a response of class labels 0..K-1 (K = ModelSpec.Classes
	// = Problem.Classes); predictions are the n x K class probabilities.
	// See multiclass.go for how it is inferred and what gradients mean.
	Multiclass
)

// String returns the task's name as used on the command line.
func (t Task) String() string {
	switch t {
	case Regression:
		return "regression"
	case Binary:
		return "binary"
	case Multiclass:
		return "multiclass"
	}
	return fmt.Sprintf("Task(%d)", int(t))
}

// ParseTask parses a task name ("regression", "binary" or "multiclass").
func ParseTask(s string) (Task, error) {
	switch strings.ToLower(s) {
	case "regression":
		return Regression, nil
	case "binary", "classification":
		return Binary, nil
	case "multiclass":
		return Multiclass, nil
	}
	return 0, &ChoiceError{Setting: "task", Value: s, Want: "regression, binary or multiclass"}
}

// ModelSpec says what model a Backend should build. Options are the
// backend's own settings as strings (they come from the command line and cross
// the plugin boundary unchanged); a backend rejects options it does not know.
type ModelSpec struct {
	Task    Task
	Inputs  int               // number of input columns
	Seed    int64             // every random choice of the model derives from it
	Options map[string]string // backend-specific, e.g. "hidden": "50"
	// Classes is K, the number of classes, for Multiclass (labels
	// 0..K-1, K >= 2); 0 for the other tasks.
	Classes int
	// Pretrained: this is the full model (every feature present) and the
	// backend loads its fitted state from what the options name (a
	// pre-trained network's weights) instead of training it; Fit then
	// only checks the data's shape. Models of reduced problems are never
	// pretrained: they are trained on data with a feature removed.
	Pretrained bool
}

// Model is a predictive model. Fit trains it on the rows of x with responses y
// (class labels 0/1 for Binary, 0..K-1 for Multiclass); Predict returns an
// n x 1 matrix of predictions (means for regression, P(Y = 1) for binary),
// or for Multiclass the n x K matrix of class probabilities. Fit may be
// called once.
//
// No method of a model (here or in the optional interfaces below) may
// modify its input matrices or vectors: estimators pass the same ones to
// many calls, and the plugin transport hands a plugin's models the input
// matrices it caches.
type Model interface {
	Fit(ctx context.Context, x mat.Matrix, y []float64) error
	Predict(ctx context.Context, x mat.Matrix) (*mat.Dense, error)
}

// Gradienter is a differentiable Model: what the lazy estimator needs. The
// parameters theta are the ones Fit produced; M is their number. Gradients
// are those of the prediction Predict returns (the mean for regression, the
// probability for binary), so that the lazy estimator's ridge regression of
// the residual y - h(x) on the gradient features is the same for every task.
//
// For Multiclass the prediction has K outputs and every sample contributes
// K rows, output-major within the sample: row i*K + k of the Jacobian is the
// gradient of P(Y_i = k); Kernel is then (n1 K) x (n2 K), JacobianTVec takes
// a of length n K, and PredictShifted returns n x K probabilities.
type Gradienter interface {
	Model
	// NumParams returns M.
	NumParams() int
	// Jacobian returns the n x M matrix Phi of per-sample gradients
	// d h_theta(x_i) / d theta at the current parameters.
	Jacobian(ctx context.Context, x mat.Matrix) (*mat.Dense, error)
	// PredictShifted returns the predictions of the network at
	// theta + dtheta (len(dtheta) == M) without changing theta.
	PredictShifted(ctx context.Context, x mat.Matrix, dtheta []float64) (*mat.Dense, error)
}

// Kerneler is the optional structured form of a Gradienter: the NTK Gram and
// the transposed Jacobian product without materialising the n x M Jacobian.
// Backends whose parameters are many (M much larger than n) should provide it;
// the lazy estimator uses it when the dual side is the smaller one.
type Kerneler interface {
	// Kernel returns K = Phi(x1) Phi(x2)^T (n1 x n2; for a model of K > 1
	// outputs (n1 K) x (n2 K), rows and columns stacked as Jacobian's, row
	// i*K + k). A nil x2 means x1, and the result is then symmetric. The result is the caller's: it may be
	// changed (the lazy estimator symmetrises it in place).
	Kernel(ctx context.Context, x1, x2 mat.Matrix) (*mat.Dense, error)
	// JacobianTVec returns Phi(x)^T a, a vector of length M.
	JacobianTVec(ctx context.Context, x mat.Matrix, a []float64) ([]float64, error)
}

// JacobianMultiplier is the matrix-free form of a Gradienter: products
// with the Jacobian Phi(x) ((n K) x M, as Jacobian returns it) and its
// transpose, several vectors at a time (the columns of v or u), without
// forming Phi: for a network, a product costs about a forward pass per
// vector and holds O(n x width) values. The lazy estimator's Krylov solver
// uses it where neither the n x n kernel nor the M x M Gram fits in its
// memory bound; the plugin transport carries a batch of vectors per round
// trip.
type JacobianMultiplier interface {
	// JacobianMul returns Phi(x) V, (n K) x p, for V of M x p.
	JacobianMul(ctx context.Context, x mat.Matrix, v *mat.Dense) (*mat.Dense, error)
	// JacobianTMul returns Phi(x)^T U, M x p, for U of (n K) x p.
	JacobianTMul(ctx context.Context, x mat.Matrix, u *mat.Dense) (*mat.Dense, error)
}

// SinglePrecisioner is the optional interface of a JacobianMultiplier
// whose products have a faster single-precision form. SinglePrecision
// returns a JacobianMultiplier of the same Jacobian whose products may be
// computed in float32 arithmetic (inputs rounded to float32, sums
// accumulated in float32 within the matrix products, results returned as
// float64): an element of Phi(x) V then differs from the exact one by at
// most about k eps32 sum_j |Phi_ij| |V_jc| (eps32 = 2^-24, k the length of
// the longest sum, a layer's width or the rows n for Phi^T U), relative
// error ~1e-7 per term where the float64 products have ~1e-16. A product
// computed in float64 meets that bound too, so a model may serve some of
// its products (a task without a single-precision form) in double
// precision. A model may compute the signals its products need (for a
// network, the forward and backward passes at the fitted parameters) in
// float32 too: the Jacobian is then the one at those signals, each entry
// within a few eps32 times the sum of the layers' widths of the exact
// one, relative to the absolute signals. The view may also be a
// PreparedPredictor: its PredictPrepared returns the predictions of that
// single-precision pass, within the same relative bound of Predict's, and
// keeps the pass for the products on x that follow. The lazy estimator's
// matrix-free Krylov solves use the view by default (their stopping rule
// asks for 1e-2 of the objective's decrease), and take their train rows'
// residuals from its PredictPrepared where it has one; its penalty search
// at scale uses a SingleKerneler's kernels, and its predictions on the
// evaluation rows stay in float64.
type SinglePrecisioner interface {
	SinglePrecision() JacobianMultiplier
}

// InPlaceKerneler is an optional interface of a Kerneler whose kernel can be
// written into storage the caller keeps across calls (the lazy estimator
// reuses one kernel's memory for the next feature's, where fresh memory
// costs a page fault every 4 KiB).
type InPlaceKerneler interface {
	// KernelInto is Kernel(ctx, x1, x2) with the result in dst's memory
	// when dst's capacity holds it (its values before the call do not
	// matter), else in fresh memory.
	KernelInto(ctx context.Context, x1, x2 mat.Matrix, dst []float64) (*mat.Dense, error)
}

// SingleKerneler is the optional interface of a Kerneler whose kernel and
// transposed product have a faster single-precision form, for the lazy
// estimator's penalty search at scale (the dense cross-validation on a
// subsample of the rows). SingleKernel returns a Kerneler of the same
// Jacobian whose Kernel and JacobianTVec may be computed in float32
// arithmetic (inputs rounded to float32, sums accumulated in float32
// within the matrix products, results returned as float64): an element of
// Kernel(x1, x2) then differs from Phi(x1) Phi(x2)^T by at most about
// k eps32 sum_j |Phi1_ij| |Phi2_lj| (eps32 = 2^-24, k the length of the
// longest sum: a layer's width for a network's Grams), and one of
// JacobianTVec(x, a) from Phi^T a by about n eps32 sum_i |Phi_ij| |a_i|.
// Values computed in float64 meet those bounds too, so a model may serve
// some of them (a task without a single-precision form) in double
// precision. The lazy estimator's subsample search uses it by default
// (lazy-precision single); the dense path at the paper's sizes never does.
type SingleKerneler interface {
	SingleKernel() Kerneler
}

// Shift is one prediction of a Gradienter at shifted parameters: on X at
// theta + DTheta or, when XTrain is set (the dual form), at
// theta + Phi(XTrain)^T A, which needs a Kerneler (JacobianTVec, then
// PredictShifted).
//
// Single allows the dual form's Phi(XTrain)^T A in single precision: by the
// model's SingleKernel's JacobianTVec when it is a SingleKerneler
// (KernelerOf); the predictions at the shifted parameters are computed as
// without it.
type Shift struct {
	X      mat.Matrix
	DTheta []float64
	XTrain mat.Matrix
	A      []float64
	Single bool
}

// ShiftBatcher is an optional interface of Gradienter models: several
// shifted predictions in one call. The lazy estimator makes one for every
// fold of every candidate penalty; the plugin transport's client
// implements it, one round trip for all of them (the plugin computes them
// concurrently and keeps the dual form's M-vectors on its side) instead of
// one per prediction, two in the dual form.
type ShiftBatcher interface {
	PredictShifts(ctx context.Context, shifts []Shift) ([]*mat.Dense, error)
}

// GramBuilder is an optional interface of Gradienter models: the primal
// counterpart of Kerneler. Gram returns G = Phi(x)^T Phi(x) (M x M) and
// b = Phi(x)^T e (len(e) == the Jacobian's rows: K per sample for
// Multiclass) without handing over the n x M Jacobian, which the lazy
// estimator's primal side (M < n) needs only through them. The plugin
// transport's client implements it for every backend with gradients (the
// plugin forms G and b next to the model, so only M(M+1)/2 + M values
// cross instead of n M). G and b are the caller's, to keep or overwrite
// (the lazy estimator forms its folds' systems in their storage). Where
// dst's capacity holds M x M values, G may be written in its memory (its
// values before the call do not matter): the lazy estimator reuses one
// feature's Grams' memory for the next feature's, where fresh memory costs
// a page fault every 4 KiB; a builder may ignore it.
type GramBuilder interface {
	Gram(ctx context.Context, x mat.Matrix, e []float64, dst []float64) (g *mat.SymDense, b []float64, err error)
}

// Capabilities says what the models of a backend can do. Every backend
// does regression; the fields say what it does beyond that. Estimators and
// the CLI read them before any model is trained (an estimator's Needs), and
// the As functions (As[Gradienter], ...) read a Capable model's before
// asserting an optional interface: the plugin transport's remote model has
// every method and works as far as its backend's capabilities say.
type Capabilities struct {
	Gradients      bool // models implement Gradienter (the lazy estimator needs it)
	Kernel         bool // models implement Kerneler
	Classification bool // Binary task supported
	// Multiclass: models fit a response with K > 2 classes (labels
	// 0..K-1), for the multiclass task once the framework has one.
	Multiclass bool
	// WarmStart: models can resume training from another model's fitted
	// parameters (what early-stopping estimators such as lazy-es need).
	WarmStart bool
	// WarmStop: models' warm starts can also end by early stopping
	// (WarmStopper; what warm-es needs). It implies WarmStart.
	WarmStop bool
	// Persist: fitted models save their state and load it into a new
	// model of the same spec (Persister; vi train's model files).
	Persist bool
	// MatrixFree: models implement JacobianMultiplier (products with the
	// Jacobian without forming it).
	MatrixFree bool
	// SinglePrecision: models' JacobianMultiplier is a SinglePrecisioner
	// (products in float32 arithmetic, faster).
	SinglePrecision bool
	// SingleKernel: models' Kerneler is a SingleKerneler (Kernel and
	// JacobianTVec in float32 arithmetic, faster).
	SingleKernel bool
}

// OptionInfo describes one backend option for `vi backends` and usage text.
type OptionInfo struct {
	Name    string
	Default string
	Usage   string
}

// Backend builds models. Implementations register themselves with
// RegisterBackend; they may run in this process or behind a plugin.
type Backend interface {
	Capabilities() Capabilities
	Options() []OptionInfo
	// New returns an untrained model. Errors in spec (unknown option, bad
	// value) wrap ErrUsage. ctx bounds the call (a remote backend creates
	// the model in its process), not the model's life.
	New(ctx context.Context, spec ModelSpec) (Model, error)
}

// Release frees what a model holds outside the Go heap (a remote model in a
// plugin process); it is a no-op for models that are not io.Closers.
func Release(m Model) error {
	if c, ok := m.(interface{ Close() error }); ok {
		return c.Close()
	}
	return nil
}
