package pipeline

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
)

// TrainModel trains the full models of a run as Run trains them, every
// repetition's (Config.Repeats, each seeded with RepeatSeed) split or
// cross-fitting folds (Config.CrossFit, or Config.Partition's), Workers
// at a time, and returns
// them as a model file's content: a run with Saved set to it gives the
// numbers of the run that trains. Each repetition's models are saved and
// released before the next is trained. Every full model must be a
// Persister (Capabilities.Persist).
func TrainModel(ctx context.Context, d *dataio.Dataset, cfg Config, workers int) (*dataio.SavedModel, error) {
	if cfg.Saved != nil {
		return nil, framework.FieldErrorf("Config.Saved", "is set: TrainModel trains the models a model file holds")
	}
	if cfg.Repeats < 0 {
		return nil, framework.FieldErrorf("Config.Repeats", "must be at least 1 (0 means 1), got %d", cfg.Repeats)
	}
	n, _ := d.X.Dims()
	cfg, err := withPartition(n, cfg)
	if err != nil {
		return nil, err
	}
	sp, err := newSetup(d, cfg)
	if err != nil {
		return nil, err
	}
	s := &dataio.SavedModel{
		Backend: cfg.BackendName, Options: cfg.Options, Candidates: candidateNames(cfg.Candidates),
		Task: sp.task.String(), Classes: sp.classes,
		Target: d.Names[sp.target], Features: slices.Clone(sp.names), Seed: cfg.Seed,
		Data: dataio.DataFingerprint(d), Partition: PartitionSum(cfg.Partition),
	}
	if d.Encoding != nil {
		opts := d.Encoding.Options
		s.Prepare = &opts
	}
	if cfg.CrossFit >= 2 {
		s.CrossFit = cfg.CrossFit
	} else {
		s.TrainFrac = trainFrac(cfg)
	}
	M := max(cfg.Repeats, 1)
	if M > 1 {
		s.Repeats = M
	}
	for rep := range M {
		folds, kc, err := prepareRepetition(ctx, d, &cfg, rep, workers)
		if kc != nil {
			// The file is of the chosen kind, and says why.
			s.Backend, s.Options, s.Candidates = cfg.BackendName, cfg.Options, candidateNames(cfg.Candidates)
			s.Choice = kc.choice
		}
		if err == nil {
			err = saveFolds(ctx, s, folds)
			for _, p := range folds {
				p.Close()
			}
		}
		if err != nil {
			if M > 1 {
				err = fmt.Errorf("repetition %d/%d: %w", rep+1, M, err)
			}
			return nil, err
		}
	}
	return s, nil
}

// saveFolds appends the full models of one repetition's folds to s.
func saveFolds(ctx context.Context, s *dataio.SavedModel, folds []*framework.Problem) error {
	for k, p := range folds {
		ps, ok := framework.AsPersister(p.Full)
		if !ok {
			return framework.Usagef("backend %s cannot save its models (no model files)", s.Backend)
		}
		state, err := ps.SaveState(ctx)
		if err != nil {
			if len(folds) > 1 {
				return fmt.Errorf("save full model, fold %d: %w", k+1, err)
			}
			return fmt.Errorf("save full model: %w", err)
		}
		s.Folds = append(s.Folds, dataio.SavedFold{Mean: p.Means, SD: p.SDs, Fill: p.Fill, Options: p.Spec.Options,
			Chosen: p.Chosen, Candidates: p.Candidates, Selection: p.Selection, Params: state})
	}
	return nil
}

// repetitionConfig is cfg for repetition rep of Run (0-based): one
// repetition, seeded with RepeatSeed, and with Saved, that repetition's
// saved models.
func repetitionConfig(cfg Config, rep int) Config {
	c := cfg
	c.Seed, c.Repeats = inference.RepeatSeed(cfg.Seed, rep), 1
	if s := cfg.Saved; s != nil {
		r := *s
		k := s.PerRepeat()
		r.Seed, r.Repeats = c.Seed, 0
		r.Folds = s.Folds[min(rep*k, len(s.Folds)):min((rep+1)*k, len(s.Folds))]
		c.Saved = &r
	}
	return c
}

func candidateNames(cs []Candidate) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return out
}

// trainFrac is the train share a single split of cfg uses.
func trainFrac(cfg Config) float64 {
	if cfg.TrainFrac == 0 {
		return DefaultTrainFrac
	}
	return cfg.TrainFrac
}

// checkSaved reports whether the saved models s fit a run on d with cfg: the same
// data (bit for bit), backend, options, seed, split, repetitions, target,
// features and task. Its errors are input errors naming the model file and the Config
// field that differs.
func checkSaved(s *dataio.SavedModel, d *dataio.Dataset, cfg Config) error {
	bad := func(format string, args ...any) error {
		return &dataio.InputError{File: s.Source, Msg: fmt.Sprintf(format, args...)}
	}
	if err := checkSavedPrepare(s, d); err != nil {
		return err
	}
	if got := dataio.DataFingerprint(d); got != s.Data {
		return bad("the model was trained on other data than %s (the data's fingerprint differs: other rows, values or column names)", d.Source)
	}
	if cfg.BackendName != s.Backend {
		return bad("the model is of backend %q, not %q (Config.BackendName)", s.Backend, cfg.BackendName)
	}
	if !maps.Equal(cfg.Options, s.Options) && (len(cfg.Options) > 0 || len(s.Options) > 0) {
		return bad("the model was trained with backend options %v, not %v (Config.Options)", s.Options, cfg.Options)
	}
	if got := candidateNames(cfg.Candidates); !slices.Equal(got, s.Candidates) {
		return bad("the model chose among candidates %v, not %v (Config.Candidates)", s.Candidates, got)
	}
	if cfg.Seed != s.Seed {
		return bad("the model was trained with seed %d, not %d (Config.Seed)", s.Seed, cfg.Seed)
	}
	cf := cfg.CrossFit
	if cf < 2 {
		cf = 0
	}
	if cf != s.CrossFit {
		return bad("the model was trained for crossfit %d, not %d (Config.CrossFit)", s.CrossFit, cf)
	}
	if reps := max(cfg.Repeats, 1); reps != s.Repetitions() {
		return bad("the model holds %d repetitions, not %d (Config.Repeats)", s.Repetitions(), reps)
	}
	if cf == 0 && trainFrac(cfg) != s.TrainFrac {
		return bad("the model was trained on a train share of %g, not %g (Config.TrainFrac)", s.TrainFrac, trainFrac(cfg))
	}
	return nil
}

// checkSavedSetup checks what newSetup resolved (target, features, task)
// against the saved models s.
func checkSavedSetup(s *dataio.SavedModel, sp *setup) error {
	bad := func(format string, args ...any) error {
		return &dataio.InputError{File: s.Source, Msg: fmt.Sprintf(format, args...)}
	}
	if t := sp.d.Names[sp.target]; t != s.Target {
		return bad("the model was trained for target %q, not %q (Config.Target)", s.Target, t)
	}
	if !slices.Equal(sp.names, s.Features) {
		return bad("the model was trained on features %v, not %v", s.Features, sp.names)
	}
	if sp.task.String() != s.Task || sp.classes != s.Classes {
		return bad("the model was trained for task %s, not %s (Config.Task)", s.Task, sp.task)
	}
	return nil
}

// loadSaved makes the saved model of fold (cfg.Saved), after checking
// that the fold's standardisation is the one the run computed and its
// options the run's (spec's with the chosen one of cfg.Candidates laid
// over them): a new model of spec with those options, loaded with its
// state, and the choice among the candidates as the training run made it.
func loadSaved(ctx context.Context, cfg Config, spec framework.ModelSpec, fold int, fit fitted) (*selection, error) {
	s, be, cands := cfg.Saved, cfg.Backend, cfg.Candidates
	if fold >= len(s.Folds) {
		return nil, &dataio.InputError{File: s.Source, Msg: fmt.Sprintf("the model file holds %d models, the run needs fold %d", len(s.Folds), fold+1)}
	}
	f := s.Folds[fold]
	if !slices.Equal(f.Mean, fit.means) || !slices.Equal(f.SD, fit.sds) {
		return nil, &dataio.InputError{File: s.Source, Msg: fmt.Sprintf("the standardisation of fold %d differs from the model's (other split?)", fold+1)}
	}
	if !slices.Equal(f.Fill, fit.fill) {
		return nil, &dataio.InputError{File: s.Source, Msg: fmt.Sprintf("the imputation of fold %d's missing cells differs from the model's (other split or data?)", fold+1)}
	}
	// The fold's options are the run's (spec's, the caller's), laid over
	// with its chosen candidate's: a model file's options never reach a
	// backend unchecked, as they may name files or code.
	opts, err := foldOptions(spec.Options, cands, f.Chosen)
	if err != nil {
		return nil, &dataio.InputError{File: s.Source, Msg: fmt.Sprintf("fold %d: %v", fold+1, err)}
	}
	// A model tunes the values of options the run gives (framework.Tuner):
	// other keys are refused before any model is made.
	mismatch := func(run map[string]string) error {
		return &dataio.InputError{File: s.Source, Msg: fmt.Sprintf("fold %d was trained with backend options %v, not the run's %v", fold+1, f.Options, run)}
	}
	if !slices.Equal(slices.Sorted(maps.Keys(opts)), slices.Sorted(maps.Keys(f.Options))) {
		return nil, mismatch(opts)
	}
	spec.Options = opts
	full, err := be.New(ctx, spec)
	if err != nil {
		return nil, err
	}
	p, ok := framework.AsPersister(full)
	if !ok {
		framework.Release(full)
		return nil, framework.Usagef("backend %s cannot load saved models", s.Backend)
	}
	state, err := f.State()
	if err != nil {
		framework.Release(full)
		return nil, err
	}
	if err := p.LoadState(ctx, state); err != nil {
		framework.Release(full)
		return nil, fmt.Errorf("load from %s: %w", s.Source, err)
	}
	// The fold's options are the run's with what the model tuned (its
	// state says) laid over them, as training recorded them.
	if spec.Options = withTuned(opts, full); !maps.Equal(spec.Options, f.Options) {
		framework.Release(full)
		return nil, mismatch(spec.Options)
	}
	return &selection{model: full, spec: spec, chosen: f.Chosen, scores: f.Candidates, note: f.Selection}, nil
}

// fitted is what a fold's train rows fitted before its full model: the
// standardisation and the imputation of missing cells (nil without).
type fitted struct {
	means, sds, fill []float64
}

// foldOptions returns the options of the full model that chose the
// candidate named chosen among cands ("" without candidates): base with
// the candidate's options laid over them.
func foldOptions(base map[string]string, cands []Candidate, chosen string) (map[string]string, error) {
	if len(cands) == 0 {
		if chosen != "" {
			return nil, fmt.Errorf("chose candidate %q, but the run has no candidates", chosen)
		}
		return base, nil
	}
	for _, c := range cands {
		if c.Name == chosen {
			return mergeOptions(base, c.Options), nil
		}
	}
	return nil, fmt.Errorf("chose candidate %q, not one of the run's %v", chosen, candidateNames(cands))
}

// checkSavedPrepare reports data prepared otherwise than the saved
// model's (SavedModel.Prepare): other column selection, categorical
// columns or missing-value policy.
func checkSavedPrepare(s *dataio.SavedModel, d *dataio.Dataset) error {
	var got *dataio.PrepareOptions
	if d.Encoding != nil {
		got = &d.Encoding.Options
	}
	if s.Prepare == nil && got == nil {
		return nil
	}
	if s.Prepare == nil || got == nil || !s.Prepare.Equal(*got) {
		return &dataio.InputError{File: s.Source, Msg: fmt.Sprintf("the model was trained on data prepared with %s, not %s", s.Prepare, got)}
	}
	return nil
}

// withTuned is opts with the options model m tuned (framework.Tuner) laid
// over them: the options that refit m's kind without its search.
func withTuned(opts map[string]string, m framework.Model) map[string]string {
	t := framework.TunedOptions(m)
	if len(t) == 0 {
		return opts
	}
	return mergeOptions(opts, t)
}
