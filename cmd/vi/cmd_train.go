package main

import (
	"context"
	"fmt"
	"io"
	"runtime"

	"github.com/lazyvi/lazyvi/backendplugin"
	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inferflags"
	"github.com/lazyvi/lazyvi/internal/atomicfile"
	"github.com/lazyvi/lazyvi/pipeline"
)

// trainOptions are the flags of vi train.
type trainOptions struct {
	data      *dataFlags
	trainFrac float64
	seed      int64
	workers   int
	crossfit  int
	repeats   int
}

func newTrainCommand() *Command {
	var o trainOptions
	cmd := &Command{
		UsageLine: "train --data FILE [--target COL] [model flags] --out MODEL",
		Short:     "train the full models once and save them to a model file",
		Long: `Train trains the full models of vi estimate with the same flags (the same
splits, seeds, standardisation, backend and options, --hidden auto's choice
and the choice against the linear model included) and writes them to a model file: the backend's parameters with
everything needed to use them again, and a fingerprint of the data. By
default that is every network of vi estimate's default inference: three
repetitions (other seeds) of three cross-fitting folds, nine networks.
--crossfit K and --repeats M change the counts as they do for vi estimate;
--repeats 1 --crossfit 0 (or --train-frac) trains one network on one
train/evaluation split.

"vi estimate --data FILE --model MODEL" then loads them instead of
training and gives exactly the numbers of the run that trains them (its
folds, repetitions and train share are the model's); with --shard K/N,
many processes or a job array share one trained model (see
docs/scale-out.md).

The model file is versioned and checksummed: a damaged file, one written by
a lazyvi of another plugin protocol version, or one used with other data or
other settings is refused with exit code 2. Every built-in backend can save
its models; an external plugin can when it says so (vi backends).

--out is required and is written atomically.`,
	}
	fs := &cmd.Flag
	o.data = newDataFlags(cmd, []string{"hidden", "epochs", "image"}, map[string]string{
		"out": "write the model to `file` (atomically)",
	})
	fs.Float64Var(&o.trainFrac, "train-frac", pipeline.DefaultTrainFrac, "`share` of rows in the train split")
	fs.Int64Var(&o.seed, "seed", defaultSeed, "random `seed` of the split and the training")
	fs.IntVar(&o.workers, "workers", runtime.NumCPU(), "train `N` cross-fitting models at a time")
	fs.IntVar(&o.crossfit, "crossfit", 0, "train one model per fold of `K` cross-fitting folds (0: one train/evaluation split, --train-frac; 3 unless --train-frac or --repeats 1, as vi estimate's default)")
	fs.IntVar(&o.repeats, "repeats", 1, "train the split's or the cross-fit's models `M` times with other seeds (3 unless --train-frac or --crossfit 0, as vi estimate's default)")
	cmd.Run = func(ctx context.Context, a *app, args []string) error { return o.run(ctx, a, cmd, args) }
	return cmd
}

func (o *trainOptions) run(ctx context.Context, a *app, cmd *Command, args []string) (err error) {
	if err := noArgs(cmd, args); err != nil {
		return err
	}
	set := givenFlags(cmd)
	switch {
	case o.data.out == "":
		return framework.Usagef("train: --out MODEL is required (the model file to write)")
	case !(o.trainFrac > 0 && o.trainFrac < 1):
		return framework.Usagef("--train-frac must be in (0, 1), got %g", o.trainFrac)
	case o.workers < 1:
		return framework.Usagef("--workers must be at least 1, got %d", o.workers)
	case o.crossfit < 0 || o.crossfit == 1:
		return framework.Usagef("--crossfit must be 0 (no cross-fitting) or at least 2, got %d", o.crossfit)
	case o.crossfit >= 2 && set["train-frac"]:
		return framework.Usagef("--train-frac and --crossfit exclude each other (cross-fitting evaluates every fold in turn)")
	case o.repeats < 1:
		return framework.Usagef("--repeats must be at least 1, got %d", o.repeats)
	}
	if err := o.data.checkLoadedInference(set, o.crossfit, o.repeats, false); err != nil {
		return err
	}
	o.defaultCounts(set)
	if err := checkOutDir("--out", o.data.out); err != nil {
		return err
	}
	if err := checkNotInput([]fileFlag{{"--out", o.data.out}}, []fileFlag{{"--data", o.data.data}, {"--eval-data", o.data.evalData}}); err != nil {
		return err
	}
	r, d, err := o.data.setup(ctx, a, set, nil)
	if err != nil {
		return err
	}
	prog := r.progress("train")
	defer prog.Close()
	be, closeBackend, err := r.open(ctx, prog)
	if err != nil {
		return err
	}
	defer keepErr(&err, closeBackend)
	if !be.Capabilities().Persist {
		return framework.Usagef("backend %s cannot save its models (no model files; see 'vi backends')", r.backend.name)
	}
	if err := r.checkBackend(be, d, nil); err != nil {
		return err
	}
	r.training(prog, d)
	cfg := r.config(be)
	cfg.TrainFrac, cfg.Seed, cfg.CrossFit, cfg.Repeats = o.trainFrac, o.seed, o.crossfit, o.repeats
	saved, err := pipeline.TrainModel(ctx, d, cfg, o.workers)
	prog.Clear()
	if err != nil {
		return runError(ctx, err)
	}
	saved.Protocol = backendplugin.ProtocolVersion
	var size int64
	if err := atomicfile.Write(o.data.out, func(w io.Writer) error {
		cw := &countingWriter{w: w}
		err := dataio.WriteModel(cw, saved)
		size = cw.n
		return err
	}); err != nil {
		return err
	}
	hidden := ""
	if h := saved.Folds[0].Options["hidden"]; h != "" {
		hidden = ", hidden " + h
	}
	kind := saved.Backend
	if c := saved.Choice; c != nil && c.Chosen != r.backend.name {
		kind += fmt.Sprintf(" (chosen over %s by cross-validated %s)", r.backend.name, c.Measure)
	}
	trained := d.Source
	if len(d.Parts) == 2 { // --eval-data: its rows only judge the models
		trained = fmt.Sprintf("%s (evaluation rows: %s)", d.Parts[0].Source, d.Parts[1].Source)
	}
	fmt.Fprintf(a.stderr, "vi: wrote %s (%s: %s%s, seed %d, trained on %s; %d bytes)\n", o.data.out, saved.Models(), kind, hidden, o.seed, trained, size)
	return nil
}

// defaultCounts sets --crossfit and --repeats where the flags leave them to
// vi estimate's default inference, by the rule vi estimate's flags follow
// (lazyvi.InferenceDefaults): unless --train-frac, --crossfit 0 or
// --repeats 1 asks for one split or one repetition, or the network is
// loaded (--opt weights=), lazyvi.DefaultCrossFit folds (with evaluation
// rows given, their own) and DefaultRepeats repetitions unless given.
func (o *trainOptions) defaultCounts(set map[string]bool) {
	if o.data.opts[pipeline.PretrainedOption] != "" {
		return // one loaded network, judged once (InferenceDefaults)
	}
	cfg, ensemble := inferflags.CountDefaults(set, o.data.evalFlagsGiven(), o.trainFrac, o.crossfit, o.repeats)
	if ensemble {
		o.crossfit, o.repeats = cfg.CrossFit, cfg.Repeats
	}
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
