package pipeline

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
)

// EstimateOptions tune Estimate and Run. The zero value is what vi estimate
// does without flags: split inference at level DefaultLevel, p-values of
// H0: VI <= 0 without adjustment, all CPUs.
type EstimateOptions struct {
	// InferOptions are the inference's settings (the interval's level,
	// the null's delta, the adjustment, ...). Run and Estimate seed
	// Perturbed's noise with the run's seed: they set InferOptions.Seed to
	// Config.Seed (Estimate: the first fold's Problem.Seed).
	inference.InferOptions

	Workers int // concurrent (estimator, feature) jobs; 0 means runtime.NumCPU()
	// Progress, when set, is called with (0, total) as the estimation
	// starts and (done, total) after each job, from the workers.
	Progress func(done, total int)

	// Checkpoint, when set, lets an interrupted run resume (see
	// ReduceOptions.Checkpoint).
	Checkpoint Checkpoint

	// Shard, when not whole, makes Run estimate one slice of the features
	// and say so in Report.Shard, for MergeReports; RunID is the run's
	// fingerprint that the shards of one run share (see ShardInfo.Run).
	Shard Shard
	RunID string
}

// infer is the InferOptions of these options, seed seeding Perturbed's
// noise.
func (o EstimateOptions) infer(seed int64) inference.InferOptions {
	inf := o.InferOptions
	inf.Seed = seed
	return inf
}

// Estimate runs every estimator on every feature, Workers at a time, and
// turns each reduced model into VI, standard error, interval and p-value
// with the measure m (see Reductions.Infer): with the zero options, VI =
// V(full) - V(reduced) on the evaluation split and se the standard
// deviation of the per-sample influence differences over sqrt(n2).
// Results are ordered by estimator, then feature, whatever the scheduling.
func Estimate(ctx context.Context, p *framework.Problem, m framework.Measure, ests []framework.Estimator, feats []framework.Feature, opt EstimateOptions) ([]inference.Result, error) {
	return EstimateFolds(ctx, []*framework.Problem{p}, m, ests, feats, opt)
}

// EstimateFolds is Estimate over the folds of a cross-fitted run
// (PrepareFolds); with one Problem it is Estimate. Perturbed inference
// seeds its noise with the first fold's Seed.
func EstimateFolds(ctx context.Context, folds []*framework.Problem, m framework.Measure, ests []framework.Estimator, feats []framework.Feature, opt EstimateOptions) ([]inference.Result, error) {
	red, err := reduceFolds(ctx, folds, m, ests, feats, opt, "")
	if err != nil {
		return nil, err
	}
	return red.Infer(m, opt.infer(folds[0].Seed))
}

// reduceFolds checks that the measure scores the folds' full models and
// reduces every feature with every estimator on every fold, label naming
// the folds (see ReduceOptions.Label).
func reduceFolds(ctx context.Context, folds []*framework.Problem, m framework.Measure, ests []framework.Estimator, feats []framework.Feature, opt EstimateOptions, label string) (*inference.Reductions, error) {
	if len(folds) == 0 {
		return nil, fmt.Errorf("estimate: no problem")
	}
	if !m.Supports(folds[0].Task) {
		return nil, framework.Usagef("measure %q does not fit a %s response", m.Name(), folds[0].Task)
	}
	if lv := opt.Level; lv != 0 && !(lv > 0 && lv < 1) {
		return nil, framework.FieldErrorf("EstimateOptions.Level", "must be in (0, 1), got %g", lv)
	}
	for k, p := range folds {
		s, err := m.Evaluate(p.YEval, p.FullEval)
		if err == nil {
			err = inference.CheckScore(s)
		}
		if err != nil {
			if len(folds) > 1 {
				return nil, fmt.Errorf("measure %s of the full model, fold %d: %w", m.Name(), k+1, err)
			}
			return nil, fmt.Errorf("measure %s of the full model: %w", m.Name(), err)
		}
	}
	return Reduce(ctx, folds, ests, feats, ReduceOptions{Workers: opt.Workers, Progress: opt.Progress, SplitOnly: opt.Inference == inference.Split && !opt.Ensemble,
		Checkpoint: opt.Checkpoint, Label: label, EstimatorBaselines: true})
}

// FullResult is the full model's score on the evaluation split, with how
// its training went and what it is measured against.
type FullResult struct {
	// Score is larger-is-better (a loss's is the negated loss); Loss, for
	// a loss measure (mse, logloss), is the loss itself, -Score.
	Score   float64  `json:"score"`
	Loss    *float64 `json:"loss,omitempty"`
	Seconds float64  `json:"seconds"`

	// R2 is the full model's R² on the evaluation rows (regression only).
	R2 *float64 `json:"r2,omitempty"`
	// Accuracy (classification) is the full model's share of evaluation
	// rows whose most probable class is the response, AUC (binary) its
	// area under the ROC curve, averaged as Score is: what a reader of a
	// logloss also wants to know. Absent where the measures "accuracy"
	// and "auc" are not registered.
	Accuracy *float64 `json:"accuracy,omitempty"`
	AUC      *float64 `json:"auc,omitempty"`
	// Epochs and StoppedBy ("patience" or "cap") say how training ended,
	// for backends that report it (FitReporter; the first fold's when
	// cross-fitting).
	Epochs    int    `json:"epochs,omitempty"`
	StoppedBy string `json:"stopped_by,omitempty"`
	// Hidden names the full model's architecture: the chosen Candidate
	// (vi: the hidden layer widths), or what the caller sets.
	Hidden string `json:"hidden,omitempty"`
	// Architecture is the network the backend built, as it describes it
	// (FitReport.Architecture; a plugin's user module, say).
	Architecture string `json:"architecture,omitempty"`
	// Loaded: the full model was loaded (a pretrained network), not
	// trained; Seconds is then the loading.
	Loaded     bool                       `json:"loaded,omitempty"`
	Candidates []framework.CandidateScore `json:"candidates,omitempty"`
	// Selection says why the choice among the candidates was not made by
	// the validation loss, when it was not.
	Selection string `json:"selection,omitempty"`
	// Baselines are the intercept-only model and Config.Baselines on the
	// same evaluation rows.
	Baselines []BaselineScore `json:"baselines,omitempty"`
}

// RunInfo describes a run: what the reports of vi estimate and vi shapley
// open with (in JSON, its fields come first, at the top level).
type RunInfo struct {
	Measure string  `json:"measure"`
	Backend string  `json:"backend"`
	Task    string  `json:"task"`
	N       int     `json:"n"`
	NTrain  int     `json:"n_train"`
	NEval   int     `json:"n_eval"`
	Seed    int64   `json:"seed"`
	Level   float64 `json:"level"`
}

// RunInfoOf returns the RunInfo of problem p scored by m at the interval
// level (0 means DefaultLevel).
func RunInfoOf(p *framework.Problem, m framework.Measure, level float64) RunInfo {
	if level == 0 {
		level = inference.DefaultLevel
	}
	n1, _ := p.XTrain.Dims()
	n2, _ := p.XEval.Dims()
	return RunInfo{Measure: m.Name(), Backend: p.BackendName, Task: p.Task.String(),
		N: n1 + n2, NTrain: n1, NEval: n2, Seed: p.Seed, Level: level}
}

// Report is the outcome of Run; its JSON form is the CLI's --format json
// contract.
type Report struct {
	RunInfo
	// Inference is "perturbed", "split" or "plain" (Perturb its rho);
	// CrossFit the number of cross-fitting folds (absent for one
	// train/evaluation split, where n_train and n_eval are the split's
	// sizes, explicit evaluation rows included; with cross-fitting n_eval
	// is the rows the folds evaluate, each once: n for the seeded folds,
	// the fold numbers' rows of Config.Partition; n_train is the first
	// fold's train size); Repeats the number of repetitions combined
	// (absent for one).
	Inference string  `json:"inference"`
	Perturb   float64 `json:"perturb,omitempty"`
	CrossFit  int     `json:"crossfit,omitempty"`
	Repeats   int     `json:"repeats,omitempty"`
	// Ensemble says that each row's predictions were averaged over the
	// repetitions, except for the results whose combined says otherwise
	// (an estimator that declines the ensemble: inference.Result.Combined).
	Ensemble bool `json:"ensemble,omitempty"`
	// Debias says that the ensembled estimate was extrapolated to
	// infinitely many repetitions, BiasAware that the intervals and
	// p-values allow for each result's bias_bound (inference.InferOptions);
	// neither applies to a result whose combined is "repetitions".
	Debias    bool `json:"debias,omitempty"`
	BiasAware bool `json:"bias_aware,omitempty"`
	// Partition says that explicit evaluation rows (Config.Partition)
	// judged the models, and no seeded split; TrainedElsewhere that the
	// full model is a pre-trained network judged on a seeded split of the
	// data on the caller's word (Config.TrainedElsewhere) that none of its
	// rows trained it.
	Partition        bool `json:"partition,omitempty"`
	TrainedElsewhere bool `json:"trained_elsewhere,omitempty"`
	// ScoreUpper says that each interval's upper end comes from the
	// standard error the estimate would have there (inference.InferOptions).
	ScoreUpper bool `json:"score_upper,omitempty"`
	// BiasDirected says that each interval is widened by its bias_bound
	// only on the side the extrapolation came from.
	BiasDirected bool               `json:"bias_directed,omitempty"`
	Delta        float64            `json:"delta"`
	Adjust       string             `json:"adjust"`
	CITruncate   bool               `json:"ci_truncate,omitempty"`
	Full         FullResult         `json:"full"`
	Results      []inference.Result `json:"results"`
	// Warnings say when the full model is poor (see fullWarnings) and
	// which comparison baselines were left out and why; vi prints them on
	// stderr.
	Warnings []string `json:"warnings,omitempty"`
	// Shard is set when the report holds one shard of a run (--shard);
	// MergeReports combines the shards into the whole run's report.
	Shard *ShardInfo `json:"shard,omitempty"`
}

// Run prepares the problem, trains the full model (once per fold with
// Config.CrossFit) and estimates the importance of every feature (or group,
// Config.Groups) with every estimator; with Config.Repeats it does so once
// per repetition, each seeded with RepeatSeed, and combines them
// (InferRepeated). A nil measure means the task's default (DefaultMeasure:
// mse for regression, logloss for binary and multiclass), looked up by
// name in the registry: package lazyvi's Run, or a blank import of
// lazyvi/measures, registers them.
func Run(ctx context.Context, d *dataio.Dataset, cfg Config, m framework.Measure, ests []framework.Estimator, opt EstimateOptions) (*Report, error) {
	cfg.MinTrain = max(cfg.MinTrain, MinTrainFor(ests))
	if err := CheckRun(d, cfg, m, opt); err != nil {
		return nil, err
	}
	n, _ := d.X.Dims()
	cfg, err := withPartition(n, cfg)
	if err != nil {
		return nil, err
	}
	M := max(cfg.Repeats, 1)
	var (
		reds      []*inference.Reductions
		feats     []framework.Feature
		first     *framework.Problem
		fullSecs  float64
		score     float64
		scores    int
		baselines []BaselineScore
		notes     []string // why a baseline was left out
		r2        *float64
		shard     *ShardInfo
		class     classScores
	)
	for rep := range M {
		c := repetitionConfig(cfg, rep)
		label := ""
		if M > 1 {
			label = fmt.Sprintf("repetition %d/%d", rep+1, M)
		}
		start := time.Now()
		folds, err := prepareRun(ctx, d, c, opt.Workers)
		if err != nil {
			if label != "" {
				err = fmt.Errorf("%s: %w", label, err)
			}
			return nil, err
		}
		fullSecs += time.Since(start).Seconds()
		red, err := func() (*inference.Reductions, error) {
			defer func() {
				for _, p := range folds {
					p.Close()
				}
			}()
			if rep == 0 {
				first = folds[0]
				if m == nil {
					if m, err = framework.LookupMeasure(framework.DefaultMeasure(first.Task)); err != nil {
						return nil, fmt.Errorf("no measure given, and the default: %w (pass one, or import package lazyvi or lazyvi/measures, which register them)", err)
					}
				}
				target := cfg.Target
				if target == "" && len(d.Names) > 0 {
					target = d.Names[len(d.Names)-1]
				}
				if feats, err = dataio.ResolveUnits(first.FeatureNames, d.Units(), target, cfg.Groups, cfg.OneHot); err != nil {
					return nil, err
				}
				if opt.Shard.Count > len(feats) {
					return nil, framework.FieldErrorf("EstimateOptions.Shard", "%s: the run has %d features; use at most %d shards", opt.Shard, len(feats), len(feats))
				}
				feats, shard = opt.Shard.Slice(feats, opt.RunID)
			}
			o := opt
			if opt.Progress != nil && M > 1 {
				o.Progress = func(done, total int) { opt.Progress(rep*total+done, M*total) }
			}
			red, err := reduceFolds(ctx, folds, m, ests, feats, o, label)
			if err != nil {
				return nil, err
			}
			if rep == 0 {
				// The diagnostics of the full model: the first repetition's.
				if baselines, r2, notes, err = diagnose(ctx, folds, m, cfg.Baselines); err != nil {
					return nil, err
				}
			}
			for _, q := range folds {
				fs, err := m.Evaluate(q.YEval, q.FullEval)
				if err != nil {
					return nil, err
				}
				score += fs.Value
				scores++
				class.add(q)
			}
			return red, nil
		}()
		if err != nil {
			return nil, err
		}
		reds = append(reds, red)
	}
	res, err := inference.InferRepeated(reds, m, opt.infer(cfg.Seed))
	if err != nil {
		return nil, err
	}
	score /= float64(scores)
	if math.IsNaN(score) || math.IsInf(score, 0) {
		return nil, fmt.Errorf("measure %s of the full model: %w", m.Name(), inference.CheckScore(framework.Score{Value: score}))
	}
	rep := &Report{
		RunInfo:   RunInfoOf(first, m, opt.Level),
		Inference: opt.Inference.String(), Delta: opt.Delta, Adjust: opt.Adjust.String(), CITruncate: opt.CITruncate,
		Full:    FullResult{Score: score, Loss: framework.LossOf(m, score), Seconds: fullSecs, Baselines: baselines, R2: r2},
		Results: res,
		Shard:   shard,
	}
	rep.Full.Accuracy, rep.Full.AUC = class.means()
	rep.Full.Epochs, rep.Full.StoppedBy = first.FitReport.Epochs, first.FitReport.StoppedBy
	rep.Full.Architecture, rep.Full.Loaded = first.FitReport.Architecture, first.FitReport.Loaded
	rep.Full.Hidden, rep.Full.Candidates, rep.Full.Selection = first.Chosen, first.Candidates, first.Selection
	if opt.Inference == inference.Perturbed {
		rep.Perturb = opt.Perturb
		if rep.Perturb == 0 {
			rep.Perturb = inference.DefaultPerturb
		}
	}
	if len(reds[0].Folds) > 1 {
		// Every fold's evaluation rows, each evaluated once: every row
		// of a seeded cross-fit, the fold numbers' rows of a partition.
		rep.CrossFit, rep.NEval = len(reds[0].Folds), 0
		for _, p := range reds[0].Folds {
			rep.NEval += len(p.EvalRows)
		}
	}
	if M > 1 {
		rep.Repeats, rep.Ensemble = M, opt.Ensemble
	}
	rep.Debias, rep.BiasAware, rep.ScoreUpper = opt.Debias, opt.BiasAware, opt.ScoreUpper
	rep.BiasDirected = opt.BiasAware && opt.DirectedBias
	rep.Partition = cfg.Partition != nil
	rep.TrainedElsewhere = cfg.TrainedElsewhere && cfg.Pretrained() && cfg.Partition == nil
	rep.Warnings = append(notes, fullWarnings(m, rep.Full)...)
	return rep, nil
}

// prepareRun is PrepareFolds with Config.CrossFit >= 2 folds, else
// Prepare's one split.
func prepareRun(ctx context.Context, d *dataio.Dataset, cfg Config, workers int) ([]*framework.Problem, error) {
	if cfg.CrossFit >= 2 {
		return PrepareFolds(ctx, d, cfg, cfg.CrossFit, workers)
	}
	p, err := Prepare(ctx, d, cfg)
	if err != nil {
		return nil, err
	}
	return []*framework.Problem{p}, nil
}
