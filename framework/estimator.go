package framework

import (
	"context"

	"gonum.org/v1/gonum/mat"
)

// Feature is what an importance is measured for: one column, or a group of
// columns removed together. Columns index the design matrix (the data set's
// columns without the response).
type Feature struct {
	Name    string
	Columns []int
}

// Problem is what every estimator of a run shares: the split, the
// standardised design matrices, the full model trained once on the train
// split and its predictions, and the settings that estimators read.
type Problem struct {
	Task        Task
	BackendName string
	Backend     Backend
	Spec        ModelSpec // the full model's spec; retraining reuses it

	FeatureNames []string
	XTrain       *mat.Dense // n1 x p, standardised with train statistics
	XEval        *mat.Dense // n2 x p, standardised with train statistics
	YTrain       []float64
	YEval        []float64
	// EvalRows are the evaluation rows' indices in the data set (nil when
	// the Problem was not built from one); perturbed inference keys its
	// noise by them.
	EvalRows []int

	Full     Model
	FullEval *mat.Dense // Full's predictions on XEval (n2 x Outputs())

	// Classes is K for a Multiclass problem (YTrain and YEval hold labels
	// 0..K-1), 0 otherwise; Spec.Classes is the same.
	Classes int

	// Folds is the number of cross-validation folds for tuning (lazy's
	// ridge penalty).
	Folds int
	// Lambda, when positive, fixes lazy's ridge penalty instead of choosing
	// it by cross-validation.
	Lambda float64
	// Seed is the run's seed; estimators derive their own streams from it.
	Seed int64
	// ESSteps is the number of optimizer steps of the early-stopping
	// estimator lazy-es; 0 means one epoch.
	ESSteps int
}

// Drop returns a copy of x with the feature's columns replaced by their train
// mean, which after standardisation is zero: the paper's X^(j).
func (p *Problem) Drop(x *mat.Dense, f Feature) *mat.Dense {
	out := mat.DenseCopyOf(x)
	r, _ := out.Dims()
	for _, j := range f.Columns {
		for i := 0; i < r; i++ {
			out.Set(i, j, 0)
		}
	}
	return out
}

// Reduced is an estimator's reduced model, seen through its predictions on
// the evaluation split with the feature dropped.
type Reduced struct {
	Pred *mat.Dense // n2 x Outputs() predictions on Drop(XEval, f)
	// Lambda is the ridge penalty a lazy estimator used (+Inf: no update,
	// the reduced model is the full model); 0 when not applicable.
	Lambda float64
}

// Estimator estimates the reduced model without a feature. The framework
// turns its predictions into VI, standard error and interval with the run's
// Measure, the same way for every estimator.
type Estimator interface {
	Name() string
	// Reduce returns the reduced model's predictions on the evaluation split.
	// It must be safe to call concurrently for different features.
	Reduce(ctx context.Context, p *Problem, f Feature) (Reduced, error)
}
