package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/lazyvi/lazyvi/backendplugin"
	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/pipeline"
)

// readModelFile reads a model file of vi train that this vi can use
// (dataio.ReadModelFile). It returns "interrupted" as soon as ctx is done,
// even while the file blocks (a FIFO without a writer).
func readModelFile(ctx context.Context, path string) (*dataio.SavedModel, error) {
	m, err := dataio.ReadModelFile(ctx, path, backendplugin.ProtocolVersion)
	if err != nil {
		return nil, runError(ctx, err)
	}
	return m, nil
}

// useModel makes the run use the saved model's backend, backend options
// and target where their flags were not given (set), and refuses flags
// given with other values than the model was trained with. A plugin's
// options are never taken from the file: they must be given.
func (r *dataRun) useModel(m *dataio.SavedModel, set map[string]bool) error {
	conflict := func(flag, given, saved string) error { return modelConflict(m, flag, given, saved) }
	switch {
	case r.backend.external():
		// An external plugin: the user names the executable; its name in
		// the report must be the model's.
		if r.backend.name != m.Backend {
			return conflict("backend", r.backend.name, m.Backend)
		}
	case set["backend"] && r.backend.name != m.Backend:
		return conflict("backend", r.backend.name, m.Backend)
	default:
		bk, err := newBackendSpec(m.Backend, true, "")
		if err != nil {
			return &dataio.InputError{File: m.Source, Msg: fmt.Sprintf("the model's backend %q is not built into vi: give its executable with --plugin and --backend %s", m.Backend, m.Backend)}
		}
		bk.process, bk.startTimeout = r.backend.process, r.backend.startTimeout
		r.backend = bk
	}
	switch {
	case len(r.opts) == 0 && len(m.Options) > 0 && r.backend.external():
		// A plugin's options may name files or code (a module to import,
		// weights to unpickle); the model file's checksum proves its
		// integrity, not its origin, so they come from the command line.
		return framework.Usagef("--model %s was trained with backend options %s; a plugin's options are taken from the command line only (they may name files or code): give them with --opt", m.Source, optionsFlag(m.Options).String())
	case len(r.opts) == 0:
		r.opts = maps.Clone(m.Options)
		if r.opts == nil {
			r.opts = map[string]string{}
		}
	case !maps.Equal(r.opts, m.Options):
		return conflict("opt", optionsFlag(r.opts).String(), "options "+optionsFlag(m.Options).String())
	}
	var err error
	if r.autoHidden, err = hiddenAuto(r.opts, r.backend); err != nil {
		return err
	}
	if !set["target"] {
		r.target = m.Target
	} else if r.target != m.Target {
		return conflict("target", r.target, m.Target)
	}
	return r.useModelPrepare(m, set)
}

// useModelPrepare makes the run prepare its data file as the model's was
// (dataio.SavedModel.Prepare): --features, --drop, --categorical and
// --missing default to the model's, and given with other values are
// refused.
func (r *dataRun) useModelPrepare(m *dataio.SavedModel, set map[string]bool) error {
	var saved dataio.PrepareOptions
	if m.Prepare != nil {
		saved = *m.Prepare
	}
	savedMissing, _ := dataio.ParseMissing(string(saved.Missing))
	for _, f := range []struct {
		flag        string
		given, from *[]string
	}{
		{"features", &r.prep.Features, &saved.Features},
		{"drop", &r.prep.Drop, &saved.Drop},
		{"categorical", &r.prep.Categorical, &saved.Categorical},
	} {
		switch {
		case !set[f.flag]:
			*f.given = *f.from
		case !slices.Equal(*f.given, *f.from):
			return modelConflict(m, f.flag, strings.Join(*f.given, ","), strings.Join(*f.from, ","))
		}
	}
	switch {
	case !set["missing"]:
		r.prep.Missing = savedMissing
	case r.prep.Missing != savedMissing:
		return modelConflict(m, "missing", string(r.prep.Missing), string(savedMissing))
	}
	return nil
}

// modelConflict is the error of a flag given with another value than the
// model file m's.
func modelConflict(m *dataio.SavedModel, flag, given, saved string) error {
	return framework.Usagef("--%s %s differs from the model's %s (%s); leave --%s out to use the model's", flag, given, saved, m.Source, flag)
}

// modelCounts sets --crossfit, --repeats and --train-frac to the model
// file m's where they were not given (set), and refuses them given with
// other values. It returns set with --crossfit and --repeats added, for
// defaultInference: the model's counts decide the inference as the same
// flags given would.
func (o *estimateOptions) modelCounts(m *dataio.SavedModel, set map[string]bool) (map[string]bool, error) {
	if set["crossfit"] && o.inf.CrossFit != m.CrossFit {
		return nil, modelConflict(m, "crossfit", strconv.Itoa(o.inf.CrossFit), strconv.Itoa(m.CrossFit))
	}
	if set["repeats"] && o.inf.Repeats != m.Repetitions() {
		return nil, modelConflict(m, "repeats", strconv.Itoa(o.inf.Repeats), strconv.Itoa(m.Repetitions()))
	}
	if m.CrossFit == 0 && set["train-frac"] && o.fit.trainFrac != m.TrainFrac {
		return nil, modelConflict(m, "train-frac", strconv.FormatFloat(o.fit.trainFrac, 'g', -1, 64), strconv.FormatFloat(m.TrainFrac, 'g', -1, 64))
	}
	o.inf.CrossFit, o.inf.Repeats = m.CrossFit, m.Repetitions()
	counts := maps.Clone(set)
	counts["crossfit"], counts["repeats"] = true, true
	return counts, nil
}

// useModel sets the split and the seed of cfg, and the cross-fitting folds
// in *crossfit, to the model's where their flags were not given (set), and
// refuses flags given with other values; then cfg uses the saved model.
func (f *fitFlags) useModel(cfg *pipeline.Config, crossfit *int, m *dataio.SavedModel, set map[string]bool) error {
	conflict := func(flag, given, saved string) error { return modelConflict(m, flag, given, saved) }
	if !set["seed"] {
		cfg.Seed = m.Seed
	} else if cfg.Seed != m.Seed {
		return conflict("seed", strconv.FormatInt(cfg.Seed, 10), strconv.FormatInt(m.Seed, 10))
	}
	if !set["crossfit"] {
		*crossfit = m.CrossFit
	} else if *crossfit != m.CrossFit {
		return conflict("crossfit", strconv.Itoa(*crossfit), strconv.Itoa(m.CrossFit))
	}
	if m.CrossFit == 0 {
		if !set["train-frac"] {
			cfg.TrainFrac = m.TrainFrac
		} else if cfg.TrainFrac != m.TrainFrac {
			return conflict("train-frac", strconv.FormatFloat(cfg.TrainFrac, 'g', -1, 64), strconv.FormatFloat(m.TrainFrac, 'g', -1, 64))
		}
	}
	cfg.Saved = m
	return nil
}

// splitModelUsage is --model's help for the commands that use one
// train/evaluation split (shapley, roar).
const splitModelUsage = "use the full model of this model `file` (vi train --repeats 1 --crossfit 0) instead of training; its backend, options, target, seed and split are the run's"

// splitModel reads --model for a command that uses one train/evaluation
// split (shapley, roar) and makes the run use it (useModel); nil without
// --model. A model file of cross-fits or of several repetitions is refused.
func (r *dataRun) splitModel(ctx context.Context, path string, set map[string]bool) (*dataio.SavedModel, error) {
	if path == "" {
		return nil, nil
	}
	m, err := readModelFile(ctx, path)
	if err != nil {
		return nil, err
	}
	if m.CrossFit != 0 || m.Repetitions() > 1 {
		return nil, framework.Usagef("--model %s holds %s; vi %s uses one train/evaluation split's (train it with --repeats 1 --crossfit 0)", path, dataio.CountsString(m.CrossFit, m.Repetitions()), r.cmd)
	}
	return m, r.useModel(m, set)
}

// useSplitModel is useModel for a command without --crossfit; nothing
// without a model.
func (f *fitFlags) useSplitModel(cfg *pipeline.Config, m *dataio.SavedModel, set map[string]bool) error {
	if m == nil {
		return nil
	}
	var crossfit int
	return f.useModel(cfg, &crossfit, m, set)
}
