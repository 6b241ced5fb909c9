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
// split and its predictions, and the run's seed. An estimator's own
// settings are its own (see Configurer).
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
	// Means and SDs standardised the features: XTrain and XEval are
	// (x - Means[j]) / SDs[j] column by column, train-split statistics.
	Means, SDs []float64
	// Fill holds, for data with missing cells, the value each feature's
	// missing cells took before standardising, fitted on the train split
	// (a mean, or 1 for the indicator of a categorical column's most
	// frequent category); nil for data without missing cells.
	Fill []float64

	// Classes is K for a Multiclass problem (YTrain and YEval hold labels
	// 0..K-1), 0 otherwise; Spec.Classes is the same.
	Classes int

	// Seed is the run's seed; estimators derive their own streams from it.
	Seed int64

	// How the full model was chosen and trained: the chosen candidate's
	// name and every candidate's score (none without pipeline.Config.Candidates;
	// Spec holds the chosen options), and the model's FitReport.
	Chosen     string
	Candidates []CandidateScore
	Selection  string // why the choice was not by validation loss, if it was not
	FitReport  FitReport
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
	// Draws are further predictions of the same shape, for an estimator
	// whose reduced model is random (permute: other permutations of the
	// feature's column). The reduced model's score is the mean of the
	// measure over Pred and the Draws, and each row's influence the mean
	// of its influences: the per-row terms of the averaged score, so that
	// the standard error sees the spread the average leaves. Nil for one
	// prediction.
	Draws []*mat.Dense
	// Stats are the estimator's own numbers about this reduction, by name
	// (lazy: "lambda", the ridge penalty it used). The framework reads
	// none of them: it keeps them in checkpoints and hands them to the
	// estimator's Summarize. Values may be infinite.
	Stats map[string]float64
	// Carry is what a baseline hands to the reductions that start from it
	// (BaselineReducer; lazy at scale: the Ritz pairs of its Krylov
	// basis, which precondition the features' solves), nil for a
	// feature's reduction. The framework reads none of it; checkpoints
	// keep it, so that the features of a resumed run get the same. Its
	// values must be finite.
	Carry []float64
}

// Predictions returns Pred followed by the Draws.
func (r Reduced) Predictions() []*mat.Dense {
	if r.Pred == nil {
		return nil
	}
	return append([]*mat.Dense{r.Pred}, r.Draws...)
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

// The optional interfaces of estimators, after gonum's optimize.Method.Uses:
// an estimator says what it needs from the backend's models, how it
// describes itself, what settings it has and what its results carry beyond
// the common fields, so that adding one touches no other package (the CLI
// finds all of it through the registry).

// Needer is the optional interface of an estimator that needs more of a
// model than Fit and Predict: Needs returns the capabilities its backend
// must have (the fields set). An estimator that is not a Needer runs on
// every backend.
type Needer interface {
	Needs() Capabilities
}

// Describer is the optional interface of an estimator that describes
// itself in one line (for `vi estimators`).
type Describer interface {
	Describe() string
}

// Configurer is the optional interface of an estimator with settings, in
// the manner of a Backend's options: Settings lists them (their current
// values as Default), and Configure returns a copy of the estimator with
// the named settings set from their string form, the others kept. A name
// that is not a setting, or a bad value, is an error wrapping ErrUsage
// that starts with the setting's name. vi declares one flag per setting of
// the registered estimators (--folds, --lambda, --es-steps) and configures
// the estimators it runs with the flags given.
type Configurer interface {
	Settings() []OptionInfo
	Configure(settings map[string]string) (Estimator, error)
}

// Field is one estimator-specific field of a Result: a JSON key and its
// value.
type Field struct {
	Key   string
	Value any
}

// Baseliner is the optional interface of an estimator whose reduced model is
// not the full model without the feature but what a procedure makes of the
// full model on the reduced inputs (lazy's linearised refit, lazy-es's
// further optimizer steps). The same procedure can improve the full model
// itself, wherever its training stopped short of the training loss's minimum
// (validation-based early stopping does, by design), and that improvement
// would read as importance of every feature: a constant offset, negative for
// a feature of none. Baseline returns the procedure's predictions on the
// evaluation rows with no feature removed; when
// pipeline.ReduceOptions.EstimatorBaselines is set, the estimator's reduced
// models are scored against it instead of against the full model, so that
// what the procedure adds to any model cancels. At a full model trained to
// the minimum, the paper's setting, the baseline is the full model.
type Baseliner interface {
	Baseline(ctx context.Context, p *Problem) (Reduced, error)
}

// BaselineReducer is the optional interface of a Baseliner whose reductions
// can start from its baseline on the same Problem (lazy at scale: the
// baseline's penalty is where each feature's search starts, its Carry's Ritz
// pairs precondition the feature's solve). ReduceFrom is Reduce with base,
// which returns the Reduced that Baseline returned for p (from a checkpoint,
// its Pred, Stats and Carry), waiting for it to be computed: the estimator
// calls it only where it needs it, so that what comes before overlaps the
// baseline, and a reduction that does not need it does not wait (the time
// base waits is not counted in the reduction's seconds). Where
// pipeline.ReduceOptions.EstimatorBaselines gives the fold a baseline,
// pipeline.Reduce calls ReduceFrom for the fold's features; elsewhere (no
// baselines, as in vi roar, or a fold that split inference gives none) it
// calls Reduce. Each feature depends on the baseline only, never on another
// feature, so the results are the same whatever the workers and the order.
type BaselineReducer interface {
	Baseliner
	ReduceFrom(ctx context.Context, p *Problem, f Feature, base func() (Reduced, error)) (Reduced, error)
}

// Summarizer is the optional interface of an estimator whose results carry
// fields of their own (lazy: "lambda", "no_update"): Summarize turns the
// Stats of one feature's reductions, one per fold that has one, into
// them, in the order they are written after the common fields.
type Summarizer interface {
	Summarize(stats []map[string]float64) []Field
}

// Ensembler is the optional interface of an estimator that says whether
// its reduced predictions may be averaged row by row over models trained
// on other folds and seeds (inference.InferOptions.Ensemble), the average
// standing for the ensemble's reduced model. Ensembles returns false for
// an estimator whose reduced predictions are random draws whose average is
// another estimand (permute: the average of predictions under different
// permutations of a column tends to the model at the column's mean, which
// is dropout's reduced model); its repetitions are then combined by their
// own estimates. An estimator that is not an Ensembler may be ensembled.
type Ensembler interface {
	Ensembles() bool
}

// Ensembles reports whether e's reduced predictions may be averaged over
// models (Ensembler): true unless e is an Ensembler that says no.
func Ensembles(e Estimator) bool {
	en, ok := e.(Ensembler)
	return !ok || en.Ensembles()
}

// ConditionalMean is the optional interface of an estimator whose reduced
// model is the full model averaged over the feature's conditional law
// given the other features, g(x_-j) = E[f(x) | x_-j] (cpi). Then
// E[f - g | x_-j] = 0 whatever the full model learned, and where the
// response does not depend on the feature, y - g is a function of x_-j
// plus noise: their covariance is 0, which the covariance test
// (inference.TestCovariance) rests on. A reduced model refitted without
// the feature (lazy, retrain) has no such property: its errors and the
// full model's can covary under the null.
type ConditionalMean interface {
	ConditionalMean() bool
}

// IsConditionalMean reports whether e is a ConditionalMean that says so.
func IsConditionalMean(e Estimator) bool {
	c, ok := e.(ConditionalMean)
	return ok && c.ConditionalMean()
}

// Configure applies settings to e when it is a Configurer, keeping only
// the settings it has; other estimators are returned as they are.
func Configure(e Estimator, settings map[string]string) (Estimator, error) {
	c, ok := e.(Configurer)
	if !ok || len(settings) == 0 {
		return e, nil
	}
	own := map[string]string{}
	for _, s := range c.Settings() {
		if v, ok := settings[s.Name]; ok {
			own[s.Name] = v
		}
	}
	if len(own) == 0 {
		return e, nil
	}
	return c.Configure(own)
}

// Fits reports whether e runs on a backend with the capabilities have, and
// if not, what it lacks (CapabilityNames of the missing ones).
func Fits(e Estimator, have Capabilities) (ok bool, missing []string) {
	n, isNeeder := e.(Needer)
	if !isNeeder {
		return true, nil
	}
	need := n.Needs()
	lack := Capabilities{
		Gradients:      need.Gradients && !have.Gradients,
		Kernel:         need.Kernel && !have.Kernel,
		Classification: need.Classification && !have.Classification,
		Multiclass:     need.Multiclass && !have.Multiclass,
		WarmStart:      need.WarmStart && !have.WarmStart,
		WarmStop:       need.WarmStop && !have.WarmStop,
		Persist:        need.Persist && !have.Persist,
	}
	missing = lack.Names()
	return len(missing) == 0, missing
}

// Names names the capabilities set, in the order of the fields:
// "gradients", "kernels", "classification", "multiclass", "warm starts",
// "early-stopped warm starts", "model files".
func (c Capabilities) Names() []string {
	var out []string
	for _, f := range []struct {
		on   bool
		name string
	}{{c.Gradients, "gradients"}, {c.Kernel, "kernels"}, {c.Classification, "classification"}, {c.Multiclass, "multiclass"}, {c.WarmStart, "warm starts"}, {c.WarmStop, "early-stopped warm starts"}, {c.Persist, "model files"}} {
		if f.on {
			out = append(out, f.name)
		}
	}
	return out
}

// CandidateScore is how one candidate did: its loss on the validation
// slice that its backend's early stopping watched (FitReport).
type CandidateScore struct {
	Name string `json:"name"`
	// ValidLoss is nil when the model held out no validation slice.
	ValidLoss *float64 `json:"valid_loss"`
	Epochs    int      `json:"epochs"`
	StoppedBy string   `json:"stopped_by,omitempty"`
}

// Close releases the full model.
func (p *Problem) Close() error { return Release(p.Full) }

// Features returns one Feature per column of the design matrix.
func (p *Problem) Features() []Feature {
	fs := make([]Feature, len(p.FeatureNames))
	for j, name := range p.FeatureNames {
		fs[j] = Feature{Name: name, Columns: []int{j}}
	}
	return fs
}
