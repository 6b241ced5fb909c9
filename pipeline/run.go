package pipeline

import (
	"context"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

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

	// Check, with a positive K, also runs a reference estimator on the K
	// features the first estimator ranks highest (Report.Check).
	Check Check

	// slots, set by Run, is what the reductions take their turns from,
	// shared with the next repetition's training.
	slots *slots
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
		Checkpoint: opt.Checkpoint, Label: label, EstimatorBaselines: true, slots: opt.slots})
}

// FullResult is the full model's score on the evaluation split, with how
// its training went and what it is measured against.
type FullResult struct {
	// Score is larger-is-better (a loss's is the negated loss); Loss, for
	// a loss measure (mse, logloss), is the loss itself, -Score.
	// With an ensemble (Report.Ensemble) they are the ensemble's: every
	// row's out-of-fold predictions averaged over the repetitions, the
	// predictions the VIs are computed from.
	Score   float64  `json:"score"`
	Loss    *float64 `json:"loss,omitempty"`
	Seconds float64  `json:"seconds"`
	// SingleScore and SingleLoss, with an ensemble, are the mean score
	// (and loss) of the single models that the ensemble averages, each on
	// its own fold's rows.
	SingleScore *float64 `json:"single_score,omitempty"`
	SingleLoss  *float64 `json:"single_loss,omitempty"`

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
	// Choice says how the full model's kind was chosen against
	// Config.Rivals (the model file's choice with Config.Saved); absent
	// without rivals.
	Choice *dataio.ModelChoice `json:"model_choice,omitempty"`
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
	BiasDirected bool `json:"bias_directed,omitempty"`
	// Test is "covariance" where some results' p-values come from the
	// covariance test (inference.TestCovariance; each result's Test says
	// which), empty where all are the estimate's own.
	Test       string             `json:"test,omitempty"`
	Delta      float64            `json:"delta"`
	Adjust     string             `json:"adjust"`
	CITruncate bool               `json:"ci_truncate,omitempty"`
	Full       FullResult         `json:"full"`
	Results    []inference.Result `json:"results"`
	// Warnings say when the full model is poor (see fullWarnings) and
	// which comparison baselines were left out and why; vi prints them on
	// stderr.
	Warnings []string `json:"warnings,omitempty"`
	// Shard is set when the report holds one shard of a run (--shard);
	// MergeReports combines the shards into the whole run's report.
	Shard *ShardInfo `json:"shard,omitempty"`
	// Check is the reference estimator's check of the first estimator on
	// a few features (EstimateOptions.Check); absent without one.
	Check *CheckReport `json:"check,omitempty"`
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
	if opt.Check.K > 0 && opt.Check.Estimator != nil {
		cfg.MinTrain = max(cfg.MinTrain, MinTrainFor([]framework.Estimator{opt.Check.Estimator}))
	}
	if err := CheckRun(d, cfg, m, opt); err != nil {
		return nil, err
	}
	n, _ := d.X.Dims()
	cfg, err := withPartition(n, cfg)
	if err != nil {
		return nil, err
	}
	all := ests
	if opt.Check.K > 0 && opt.Check.Estimator != nil {
		all = append(slices.Clip(ests), opt.Check.Estimator)
	}
	var notes []string
	if cfg.Saved == nil && !cfg.Pretrained() {
		// Only where a model choice is made (chooseKind).
		cfg.Rivals, notes = rivalsRunning(cfg.Rivals, all)
	}
	// One slots for the training and the reductions, which overlap.
	sl := newSlots(workersOf(opt.Workers))
	cfg.slots, opt.slots = sl, sl
	s := &runState{d: d, cfg: cfg, m: m, ests: ests, opt: opt, reps: max(cfg.Repeats, 1), notes: notes}
	if cfg.Saved != nil {
		s.choice = cfg.Saved.Choice
	}
	take, stop := s.prepareAhead(ctx)
	defer stop()
	for rep := range s.reps {
		pr, ok := take(rep)
		if !ok {
			return nil, ctx.Err()
		}
		err := s.repetition(ctx, rep, pr)
		s.finished[rep].open()
		if err != nil {
			return nil, err
		}
	}
	return s.report()
}

// runState is what Run gathers over the repetitions.
type runState struct {
	d    *dataio.Dataset
	cfg  Config
	m    framework.Measure // nil until the first repetition knows the task
	ests []framework.Estimator
	opt  EstimateOptions
	reps int

	reds      []*inference.Reductions
	feats     []framework.Feature
	first     *framework.Problem
	fullSecs  float64
	score     float64 // the full model's measure, summed over scores folds
	scores    int
	baselines []BaselineScore
	basePreds [][]*mat.Dense // the baselines' predictions on the first repetition's folds
	notes     []string       // why a baseline was left out
	r2        *float64
	shard     *ShardInfo
	class     classScores
	choice    *dataio.ModelChoice
	known     map[string][]*mat.Dense // baselines' predictions that the model choice made
	check     *checkRun
	// begun opens when the first repetition's reductions have begun
	// (aheadShare of them) or are over, finished[r] when repetition r is
	// (its folds closed): the other repetitions' training waits for them
	// (prepareAhead makes them).
	begun    *gate
	finished []*gate
}

// repetition reduces repetition rep's folds, prepared (prepareAhead), and
// adds the full models' scores; the first also resolves the measure and
// the features and diagnoses the full model.
func (s *runState) repetition(ctx context.Context, rep int, pr preparedRep) error {
	label := ""
	if s.reps > 1 {
		label = fmt.Sprintf("repetition %d/%d", rep+1, s.reps)
	}
	if pr.err != nil {
		return pr.err
	}
	folds, kc := pr.folds, pr.kc
	s.cfg = pr.cfg
	if kc != nil {
		s.choice, s.known, s.notes = kc.choice, kc.preds, append(s.notes, kc.notes...)
	}
	s.fullSecs += pr.secs
	defer func() {
		for _, p := range folds {
			p.Close()
		}
	}()
	if rep == 0 {
		if err := s.resolve(folds[0]); err != nil {
			return err
		}
		if note := unseenNote(s.d, folds); note != "" {
			s.notes = append(s.notes, note)
		}
		if note := rareClassNote(folds); note != "" {
			s.notes = append(s.notes, note)
		}
	}
	o, co := s.opt, s.opt
	o.Progress, co.Progress = s.progress(rep, folds)
	if rep == 0 {
		defer s.begun.open()
		o.Progress = s.begun.at(o.Progress, aheadShare, aheadMinJobs)
	}
	red, err := reduceFolds(ctx, folds, s.m, s.ests, s.feats, o, label)
	if err != nil {
		return err
	}
	if err := s.checkStep(ctx, rep, folds, red, co, label); err != nil {
		return err
	}
	if rep == 0 {
		// The diagnostics of the full model: the first repetition's.
		dg, err := diagnose(ctx, folds, s.m, s.cfg.Baselines, s.known)
		if err != nil {
			return err
		}
		s.baselines, s.r2, s.basePreds = dg.scores, dg.r2, dg.preds
		s.notes = append(s.notes, dg.notes...)
	}
	for _, q := range folds {
		fs, err := s.m.Evaluate(q.YEval, q.FullEval)
		if err != nil {
			return err
		}
		s.score += fs.Value
		s.scores++
		s.class.add(q)
	}
	s.reds = append(s.reds, red)
	return nil
}

// resolve sets, from the first repetition's first fold, the measure where
// none was given, the features (the run's shard of them).
func (s *runState) resolve(first *framework.Problem) error {
	s.first = first
	var err error
	if s.m == nil {
		if s.m, err = framework.LookupMeasure(first.Task.DefaultMeasure()); err != nil {
			return fmt.Errorf("no measure given, and the default: %w (pass one, or import package lazyvi or lazyvi/measures, which register them)", err)
		}
	}
	target := s.cfg.Target
	if target == "" && len(s.d.Names) > 0 {
		target = s.d.Names[len(s.d.Names)-1]
	}
	if s.feats, err = dataio.ResolveUnits(first.FeatureNames, s.d.Units(), target, s.cfg.Groups, s.cfg.OneHot); err != nil {
		return err
	}
	if err := checkCounts(s.opt, len(s.feats)); err != nil {
		return err
	}
	s.feats, s.shard = s.opt.Shard.Slice(s.feats, s.opt.RunID)
	return nil
}

// report infers from the repetitions' reductions and assembles the
// report.
func (s *runState) report() (*Report, error) {
	opt, cfg, m, first := s.opt, s.cfg, s.m, s.first
	res, err := inference.InferRepeated(s.reds, m, opt.infer(cfg.Seed))
	if err != nil {
		return nil, err
	}
	score := s.score / float64(s.scores)
	if math.IsNaN(score) || math.IsInf(score, 0) {
		return nil, fmt.Errorf("measure %s of the full model: %w", m.Name(), inference.CheckScore(framework.Score{Value: score}))
	}
	rep := &Report{
		RunInfo:   RunInfoOf(first, m, opt.Level),
		Inference: opt.Inference.String(), Delta: opt.Delta, Adjust: opt.Adjust.String(), CITruncate: opt.CITruncate,
		Full:    FullResult{Score: score, Loss: framework.LossOf(m, score), Seconds: s.fullSecs, Baselines: s.baselines, R2: s.r2},
		Results: res,
		Shard:   s.shard,
	}
	rep.Full.Accuracy, rep.Full.AUC = s.class.means()
	if err := s.rescore(rep); err != nil {
		return nil, err
	}
	if rep.Check, err = s.checkReport(res); err != nil {
		return nil, err
	}
	rep.Full.Choice = s.choice
	rep.Full.Epochs, rep.Full.StoppedBy = first.FitReport.Epochs, first.FitReport.StoppedBy
	rep.Full.Architecture, rep.Full.Loaded = first.FitReport.Architecture, first.FitReport.Loaded
	rep.Full.Hidden, rep.Full.Candidates, rep.Full.Selection = first.Chosen, first.Candidates, first.Selection
	if opt.Inference == inference.Perturbed {
		rep.Perturb = opt.Perturb
		if rep.Perturb == 0 {
			rep.Perturb = inference.DefaultPerturb
		}
	}
	if folds := s.reds[0].Folds; len(folds) > 1 {
		// Every fold's evaluation rows, each evaluated once: every row
		// of a seeded cross-fit, the fold numbers' rows of a partition.
		rep.CrossFit, rep.NEval = len(folds), 0
		for _, p := range folds {
			rep.NEval += len(p.EvalRows)
		}
	}
	if s.reps > 1 {
		rep.Repeats, rep.Ensemble = s.reps, opt.Ensemble
	}
	rep.Debias, rep.BiasAware, rep.ScoreUpper = opt.Debias, opt.BiasAware, opt.ScoreUpper
	rep.BiasDirected = opt.BiasAware && opt.DirectedBias
	for _, r := range res {
		if r.Test != "" {
			rep.Test = r.Test
		}
	}
	rep.Partition = cfg.Partition != nil
	rep.TrainedElsewhere = cfg.TrainedElsewhere && cfg.Pretrained() && cfg.Partition == nil
	rep.Warnings = append(s.notes, fullWarnings(m, rep.Full)...)
	return rep, nil
}

// prepareRepetition is prepareRun's folds of repetition rep of cfg; in the
// first, the full model's kind is chosen against cfg.Rivals (chooseKind;
// nil kindChoice without rivals), and cfg becomes the chosen kind's for the
// later repetitions.
func prepareRepetition(ctx context.Context, d *dataio.Dataset, cfg *Config, rep, workers int) ([]*framework.Problem, *kindChoice, error) {
	c := repetitionConfig(*cfg, rep)
	folds, err := prepareRun(ctx, d, c, workers)
	if err != nil || rep > 0 || !cfg.choosesKind() {
		return folds, nil, err
	}
	kc, err := chooseKind(ctx, d, c, folds, workers)
	if err != nil {
		closeAll(folds)
		return nil, nil, err
	}
	if kc.rival != nil {
		*cfg = cfg.asRival(*kc.rival)
	}
	return kc.folds, kc, nil
}

// prepareRun is PrepareFolds with Config.CrossFit >= 2 folds, else
// Prepare's one split.
func prepareRun(ctx context.Context, d *dataio.Dataset, cfg Config, workers int) ([]*framework.Problem, error) {
	if cfg.CrossFit >= 2 {
		return PrepareFolds(ctx, d, cfg, cfg.CrossFit, workers)
	}
	var p *framework.Problem
	err := cfg.slots.do(ctx, func() (err error) {
		p, err = Prepare(ctx, d, cfg)
		return err
	})
	if err != nil {
		return nil, err
	}
	return []*framework.Problem{p}, nil
}
