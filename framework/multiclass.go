package framework

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Multiclass problems and warm starts: the task, its inference rule, and the
// optional WarmStarter interface that early-stopping estimators need.

// MaxInferredClasses is the largest number of classes InferTask recognises
// without --task multiclass.
const MaxInferredClasses = 20

// MinInferredClassRows is the fewest rows every class must have for
// InferTask to call a response class labels.
const MinInferredClassRows = 5

// IsClassLabels is InferTask's rule for a multiclass response, chosen to be
// safe for integer-valued regression responses: the values are exactly the
// integers 0, 1, ..., K-1, every one of them present, with
// 3 <= K <= MaxInferredClasses and at least MinInferredClassRows rows in
// every class. A count that happens to fill 0..K-1 this densely is taken
// for classes too; force it with --task regression (Config.Task). Labels
// that do not start at 0, skip a value, or are not integers are never
// classes.
func IsClassLabels(y []float64) bool {
	k, err := NumClasses(y)
	if err != nil || k < 3 || k > MaxInferredClasses {
		return false
	}
	counts := make([]int, k)
	for _, v := range y {
		counts[int(v)]++
	}
	for _, c := range counts {
		if c < MinInferredClassRows {
			return false
		}
	}
	return true
}

// NumClasses returns K for a response of class labels 0..K-1: the values must
// be non-negative integers and every label below the largest must occur
// (K >= 2). It is what a forced Multiclass task requires.
func NumClasses(y []float64) (int, error) {
	maxv := -1.0
	for i, v := range y {
		if v < 0 || v != math.Trunc(v) || math.IsInf(v, 0) || math.IsNaN(v) {
			return 0, fmt.Errorf("row %d of the response is %v, not a class label 0, 1, 2, ...", i+1, v)
		}
		if v > 1e6 {
			return 0, fmt.Errorf("class label %v is too large", v)
		}
		maxv = math.Max(maxv, v)
	}
	k := int(maxv) + 1
	if k < 2 {
		return 0, fmt.Errorf("need at least 2 classes, found %d", k)
	}
	seen := make([]bool, k)
	for _, v := range y {
		seen[int(v)] = true
	}
	for c, ok := range seen {
		if !ok {
			return 0, fmt.Errorf("class %d of 0..%d does not occur (labels must be 0..K-1, every one present)", c, k-1)
		}
	}
	return k, nil
}

// Outputs is the number of prediction columns of the problem's models: K
// for Multiclass, 1 otherwise.
func (p *Problem) Outputs() int { return OutputsOf(p.Task, p.Classes) }

// OutputsOf is the number of prediction columns of a task: classes for
// Multiclass, 1 otherwise.
func OutputsOf(t Task, classes int) int {
	if t == Multiclass {
		return classes
	}
	return 1
}

// WarmStarter is the optional interface of a fitted Model that can be
// trained further: what early-stopping estimators (lazy-es) need. A backend
// says its models implement it with Capabilities.WarmStart; over the plugin
// transport the new model lives in the plugin process next to the old one.
type WarmStarter interface {
	Model
	// WarmStart returns a new fitted model of the same architecture and
	// task whose training starts at this model's fitted parameters theta_f
	// (keeping every fitted constant that is not a parameter, such as a
	// response scaling) and runs steps optimizer steps on the rows of x
	// with responses y: minibatches drawn as Fit draws them, seeded by seed,
	// and no early stopping (the optimizer state it starts from is the
	// backend's choice: mlp and cnn keep Adam's second moments from Fit).
	// steps <= 0 means
	// one epoch (one pass over the rows of x). The receiver is unchanged and
	// may be used concurrently; release the result with Release.
	WarmStart(ctx context.Context, x mat.Matrix, y []float64, steps int, seed int64) (Model, error)
}

// Persister is a model that can save what Fit learned and load it back: a
// model made by the same backend from the same ModelSpec, loaded with the
// state a fitted model saved, predicts (and, with gradients, differentiates)
// bit for bit as the fitted model does. A backend whose models are
// Persisters says so with Capabilities.Persist. The state is the
// backend's own encoding; the model file (WriteModel) adds the rest.
type Persister interface {
	Model
	// SaveState returns the fitted model's state.
	SaveState(ctx context.Context) ([]byte, error)
	// LoadState makes an unfitted model the fitted model whose SaveState
	// gave state. A state of another architecture or version is an error
	// wrapping ErrUsage.
	LoadState(ctx context.Context, state []byte) error
}
