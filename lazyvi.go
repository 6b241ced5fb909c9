// Package lazyvi is the front door of the lazyvi library: Run estimates the
// variable importance of every feature of a data set as "vi estimate" does,
// with the same defaults, and Diabetes is vi's built-in data set.
//
//	d, err := dataio.LoadCSV(ctx, "data.csv")
//	...
//	rep, err := lazyvi.Run(ctx, d, lazyvi.Options{Config: pipeline.Config{Target: "y"}})
//	...
//	for _, r := range rep.Results {
//		fmt.Println(r.Feature, r.Estimator, r.VI, r.SE)
//	}
//
// Importing this package registers the built-in estimators (lazy, dropout,
// retrain, lazy-es, permute, cpi), measures (mse, r2, accuracy, logloss,
// auc) and the mlp backend, so that the framework finds them by name: no
// blank imports are needed. The parts themselves live in framework (the
// interfaces and registries), pipeline (Prepare, Estimate and the Run this
// one calls), inference, dataio, estimators and estimators/..., measures,
// backends/..., backendplugin, and workflows/shapley and workflows/roar.
package lazyvi

import (
	"context"
	"strings"

	"github.com/lazyvi/lazyvi/backends/linear"
	"github.com/lazyvi/lazyvi/backends/mlp"
	"github.com/lazyvi/lazyvi/dataio"
	_ "github.com/lazyvi/lazyvi/estimators"         // registers dropout, retrain, lazy-es
	_ "github.com/lazyvi/lazyvi/estimators/cpi"     // registers cpi
	_ "github.com/lazyvi/lazyvi/estimators/lazy"    // registers lazy
	_ "github.com/lazyvi/lazyvi/estimators/permute" // registers permute
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
	_ "github.com/lazyvi/lazyvi/measures" // registers mse, r2, accuracy, logloss, auc
	"github.com/lazyvi/lazyvi/pipeline"
)

// DefaultBackend is the backend Run uses when Config.Backend is nil, and
// vi's --backend default.
const DefaultBackend = "mlp"

// DefaultEstimators returns the names of the estimators Run uses when given
// none, in report order: vi estimate's --estimators default. Lazy answers
// what each feature is worth at a fraction of a training's cost; dropout
// costs nearly nothing and shows, beside lazy, what correlated features
// do to a naive estimate. Retrain, the reference, trains a model per
// feature and runs only when asked (vi estimate --estimators, or --check
// on a few features).
func DefaultEstimators() []string { return []string{"lazy", "dropout"} }

// AutoHidden returns the mlp architectures that the default --hidden auto
// chooses among on a validation slice, cheapest first (docs/defaults.md
// says how they were chosen).
func AutoHidden() []string { return []string{"50", "100", "100,50", "200,100"} }

// LinearBaselineRidge is the ridge penalty of the default linear model,
// the baseline and the rival: chosen by cross-validation on each fold's
// training rows (the linear backend's ridge auto), so that the linear
// model is as good as a linear model gets there, and positive, so that
// logistic regression has a finite optimum where the classes are
// separable (breast_cancer.csv's are, on 379 train rows).
const LinearBaselineRidge = linear.RidgeAuto

// LinearModel is the default linear model of FullModelDefaults: the linear
// backend in this process, ridge LinearBaselineRidge.
func LinearModel() pipeline.Baseline {
	return pipeline.Baseline{Name: "linear", Backend: linear.Backend{}, Options: map[string]string{"ridge": LinearBaselineRidge}}
}

// FullModelDefaults adds to cfg what vi adds by default to choose and judge
// the full model of a backend named name: with autoHidden (the mlp without
// hidden widths), one Candidate per AutoHidden architecture and the linear
// model (LinearModel) as a rival, which becomes the full model where the
// network does not beat it by more than the standard error of the
// difference in cross-validated loss (pipeline.Config.Rivals); and,
// unless cfg has Baselines or the backend is linear itself, the linear
// model as a baseline, scored beside the full model.
func FullModelDefaults(cfg *pipeline.Config, name string, autoHidden bool) {
	if autoHidden && len(cfg.Candidates) == 0 {
		for _, h := range AutoHidden() {
			cfg.Candidates = append(cfg.Candidates, pipeline.Candidate{Name: h, Options: map[string]string{"hidden": h}})
		}
	}
	if autoHidden && cfg.Rivals == nil {
		cfg.Rivals = []pipeline.Baseline{LinearModel()}
	}
	if cfg.Baselines == nil && name != "linear" {
		cfg.Baselines = []pipeline.Baseline{LinearModel()}
	}
}

// DefaultCrossFit and DefaultRepeats are the cross-fitting folds and
// repetitions of vi estimate's default inference (InferenceDefaults).
const (
	DefaultCrossFit = 3
	DefaultRepeats  = 3
)

// InferenceDefaults adds to cfg and opt vi estimate's default inference,
// by the rule vi's flags follow: unless cfg asks for one split or one
// repetition (TrainFrac, Repeats 1 or CrossFit 1), the repetitions of the
// cross-fit are ensembled (each row's out-of-fold predictions averaged
// over them, Ensemble), with DefaultCrossFit folds and DefaultRepeats
// repetitions where cfg does not give them (as vi's --ensemble alone, and
// its default). With explicit evaluation rows (Config.Partition) the
// folds are the partition's (one split: the repetitions train networks
// with other seeds on the same rows, and their predictions on the
// evaluation rows are averaged); with a saved model (Config.Saved), the
// folds, repetitions and train share cfg does not give are the model's,
// so that the run is the one that trained it (vi train's default: the
// default inference's); a pre-trained full model (Config.Pretrained) gets
// no default: one network is judged once. An ensemble whose inference is
// not chosen (the zero Inference, Split, with none of Debias, BiasAware,
// ScoreUpper) gets the default procedure, EnsembleDefault; pipeline.Run
// infers the ensemble by split inference as asked.
func InferenceDefaults(cfg *pipeline.Config, opt *pipeline.EstimateOptions) {
	if cfg.Pretrained() {
		return // one loaded network: judged once, on one split
	}
	if s := cfg.Saved; s != nil {
		seeded := s.Partition == "" // else the partition gives the rows and folds
		if cfg.CrossFit == 0 && seeded {
			cfg.CrossFit = max(s.CrossFit, 1)
		}
		if cfg.Repeats == 0 {
			cfg.Repeats = s.Repetitions()
		}
		if cfg.TrainFrac == 0 && s.CrossFit < 2 && seeded {
			cfg.TrainFrac = s.TrainFrac
		}
	}
	oneSplit := cfg.TrainFrac != 0 || cfg.CrossFit == 1 && cfg.Partition == nil
	if !opt.Ensemble && !oneSplit && cfg.Repeats != 1 {
		opt.Ensemble = true
	}
	if opt.Ensemble {
		if cfg.CrossFit == 0 && cfg.Partition == nil {
			cfg.CrossFit = DefaultCrossFit
		}
		if cfg.Repeats == 0 {
			cfg.Repeats = DefaultRepeats
		}
		if opt.Inference == inference.Split && !opt.Debias && !opt.BiasAware && !opt.ScoreUpper {
			EnsembleDefault(opt)
		}
	}
}

// EnsembleDefault sets opt's inference to vi estimate's default for an
// ensemble of repeated cross-fits (--inference auto): the paired estimate
// on the averaged predictions (Plain), extrapolated to infinitely many
// repetitions (Debias), its standard error with the repetitions' spread,
// and the interval and p-value of that one estimate: the interval widened
// by the extrapolation's size on the side it came from (BiasAware,
// DirectedBias), its upper end from the standard error the estimate would
// have there (ScoreUpper; docs/inference.md, "The default"). The p-values
// of an estimator whose reduced model is the full model's conditional mean
// (cpi) come from the covariance test instead (Test: TestCovariance), which
// has more power at the same size; the others' from the estimate.
func EnsembleDefault(opt *pipeline.EstimateOptions) {
	opt.Inference, opt.Debias, opt.ScoreUpper = inference.Plain, true, true
	opt.BiasAware, opt.DirectedBias = true, true
	opt.Test = inference.TestCovariance
}

// Options are what Run is asked: every zero field takes vi estimate's
// default, as documented on it.
type Options struct {
	// Config is the run: the target, the backend and its options, the
	// splits, groups and seed (see pipeline.Config). Zero fields take vi
	// estimate's defaults:
	//   - Target "": the data's last column.
	//   - Backend nil: the mlp backend (BackendName DefaultBackend), in this
	//     process, its architecture chosen among AutoHidden on a validation
	//     slice unless Options sets "hidden" (or Candidates are given).
	//   - Rivals nil (with the architecture chosen): the linear model,
	//     which is the full model where the network does not beat it by
	//     more than the standard error of the difference in
	//     cross-validated loss (FullModelDefaults).
	//   - Baselines nil: the linear model, scored beside the full model
	//     (FullModelDefaults), unless the backend is linear.
	//   - CrossFit, Repeats and TrainFrac 0: DefaultRepeats cross-fits of
	//     DefaultCrossFit folds, each row's predictions averaged over them
	//     (InferenceDefaults; a saved model's, with Saved).
	//   - Seed 0: seed 0, as given (vi's --seed is 1 by default).
	// The other fields take pipeline.Config's defaults, which are vi's.
	Config pipeline.Config
	// Measure judges the models; nil is the task's default
	// (framework.Task.DefaultMeasure: mse for regression, logloss for
	// classification).
	Measure framework.Measure
	// Estimators are the reduced-model estimators, in report order; nil is
	// DefaultEstimators (lazy, dropout), each with its zero
	// settings (lazy.Estimator's Folds: lazy.DefaultFolds), which are vi's.
	Estimators []framework.Estimator
	// Estimate tunes the estimation and its inference. The zero value is
	// vi's default inference: for the default ensemble, the debiased paired
	// estimate on the averaged predictions with a bias-aware interval
	// (EnsembleDefault); for one split or one cross-fit, split inference.
	// Level 0 is inference.DefaultLevel (0.95), Workers 0 is
	// runtime.NumCPU().
	Estimate pipeline.EstimateOptions
}

// Run trains the full model and estimates the importance of every feature
// (or group, Config.Groups) of d with every estimator: pipeline.Run with vi
// estimate's defaults for what opt does not give (see Options).
func Run(ctx context.Context, d *dataio.Dataset, opt Options) (*pipeline.Report, error) {
	cfg, ests, est := opt.Config, opt.Estimators, opt.Estimate
	autoHidden := false
	if cfg.Backend == nil {
		cfg.Backend = mlp.Backend{}
		if cfg.BackendName == "" {
			cfg.BackendName = DefaultBackend
		}
		h, set := cfg.Options["hidden"]
		autoHidden = !set || strings.EqualFold(strings.TrimSpace(h), "auto")
		if set && autoHidden {
			opts := make(map[string]string, len(cfg.Options))
			for k, v := range cfg.Options {
				if k != "hidden" {
					opts[k] = v
				}
			}
			cfg.Options = opts
		}
	}
	FullModelDefaults(&cfg, cfg.BackendName, autoHidden)
	InferenceDefaults(&cfg, &est)
	if ests == nil {
		for _, name := range DefaultEstimators() {
			e, err := framework.LookupEstimator(name)
			if err != nil {
				return nil, err
			}
			ests = append(ests, e)
		}
	}
	return pipeline.Run(ctx, d, cfg, opt.Measure, ests, est)
}
