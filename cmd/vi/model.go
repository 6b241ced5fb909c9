package main

import (
	"context"
	"fmt"
	"maps"

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
	switch {
	case r.backend.external():
		// An external plugin: the user names the executable; its name in
		// the report must be the model's.
		if r.backend.name != m.Backend {
			return m.Conflict("backend", r.backend.name, m.Backend)
		}
	case set["backend"] && r.backend.name != m.Backend:
		return m.Conflict("backend", r.backend.name, m.Backend)
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
		return m.Conflict("opt", optionsFlag(r.opts).String(), "options "+optionsFlag(m.Options).String())
	}
	var err error
	if r.autoHidden, err = hiddenAuto(r.opts, r.backend); err != nil {
		return err
	}
	if !set["target"] {
		r.target = m.Target
	} else if r.target != m.Target {
		return m.Conflict("target", r.target, m.Target)
	}
	return m.UsePrepare(&r.prep, set)
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
	return pipeline.UseSaved(cfg, &crossfit, m, set)
}
