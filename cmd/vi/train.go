package main

import (
	"bytes"
	"context"
	"fmt"
	"runtime"

	"github.com/lazyvi/lazyvi/backendplugin"
	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/pipeline"
)

// trainOptions are the flags of vi train.
type trainOptions struct {
	data      *dataFlags
	trainFrac float64
	seed      int64
	workers   int
	crossfit  int
}

func newTrainCommand() *Command {
	var o trainOptions
	cmd := &Command{
		UsageLine: "train --data FILE [--target COL] [model flags] --out MODEL",
		Short:     "train the full model once and save it to a model file",
		Long: `Train trains the full model as vi estimate --repeats 1 would (the same
split, seed, standardisation, backend and options, --hidden auto's choice
included; with --crossfit K, one model per fold) and writes it to a model
file: the backend's parameters with everything needed to use them again,
and a fingerprint of the data. "vi estimate --data FILE --model MODEL" then
reuses it instead of training, and gives exactly the numbers of
"vi estimate --repeats 1" (with the model's --crossfit K); with --shard K/N,
many processes or a job array share one trained model (see
docs/scale-out.md). vi estimate's default inference trains nine networks
(three cross-fits of three folds, with other seeds), which a model file
does not hold: a run from a model file has split inference's estimate and
test, valid but with less power (docs/inference.md, "The default").

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
	fs.IntVar(&o.crossfit, "crossfit", 0, "train one model per fold of `K` cross-fitting folds (0: one train/evaluation split)")
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
	}
	if err := o.data.checkLoadedInference(set, o.crossfit, 1, false); err != nil {
		return err
	}
	if err := checkOutDir(o.data.out); err != nil {
		return err
	}
	if err := checkNotInput([]fileFlag{{"--out", o.data.out}}, []fileFlag{{"--data", o.data.data}}); err != nil {
		return err
	}
	r, d, err := o.data.setup(ctx, a, set, nil)
	if err != nil {
		return err
	}
	prog := r.progress("train")
	defer prog.close()
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
	cfg.TrainFrac, cfg.Seed, cfg.CrossFit = o.trainFrac, o.seed, o.crossfit
	if k := foldsOf(r.partition); k >= 2 {
		cfg.CrossFit = k // a split column's folds
	}
	var probs []*framework.Problem
	if cfg.CrossFit >= 2 {
		probs, err = pipeline.PrepareFolds(ctx, d, cfg, cfg.CrossFit, o.workers)
	} else {
		var p *framework.Problem
		p, err = pipeline.Prepare(ctx, d, cfg)
		probs = []*framework.Problem{p}
	}
	prog.clear()
	if err != nil {
		return runError(ctx, err)
	}
	defer func() {
		for _, p := range probs {
			p.Close()
		}
	}()
	saved, err := pipeline.SaveModel(ctx, d, cfg, probs)
	if err != nil {
		return err
	}
	saved.Protocol = backendplugin.ProtocolVersion
	var buf bytes.Buffer
	if err := dataio.WriteModel(&buf, saved); err != nil {
		return err
	}
	if err := writeFileAtomic(o.data.out, buf.Bytes()); err != nil {
		return err
	}
	what := "1 model"
	if len(probs) > 1 {
		what = fmt.Sprintf("%d models (one per fold)", len(probs))
	}
	hidden := ""
	if h := probs[0].Spec.Options["hidden"]; h != "" {
		hidden = ", hidden " + h
	}
	fmt.Fprintf(a.stderr, "vi: wrote %s (%s: %s%s, seed %d, trained on %s; %d bytes)\n", o.data.out, what, r.backend.name, hidden, o.seed, d.Source, buf.Len())
	return nil
}
