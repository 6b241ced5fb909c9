package main

import (
	"context"
	"flag"
	"io"
	"runtime"
	"slices"
	"strconv"

	"github.com/lazyvi/lazyvi/bench"
	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/internal/progress"
	"github.com/lazyvi/lazyvi/pipeline"
)

// vi bench data times every estimator on the user's own data (or a seeded
// subsample of its rows) and reports each one's agreement with retrain
// beside its cost, so that a user can check on a slice that an estimator is
// close enough before running it on everything.
var dataBench = &benchCase{Name: "data", Short: "every estimator on your data (--data FILE --target COL): cost and agreement with retrain", Setup: func(fs *flag.FlagSet) func(context.Context, *app) error {
	f := &benchDataFlags{fs: fs}
	f.register(fs)
	return f.run
}}

// benchDataFlags are the flags of vi bench data.
type benchDataFlags struct {
	fs                                         *flag.FlagSet
	data, target, evalData, splitColumn        string
	backend, plugin, hidden, image, estimators string
	lazyPrecision, format, out                 string
	nFeatures, rows, epochs, workers, lazyMem  int
	seed                                       int64
	process                                    bool
}

func (f *benchDataFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.data, "data", "", "CSV or Parquet `file` (CSV with a header row; required)")
	fs.StringVar(&f.target, "target", "", "response `column` (default: the last column)")
	fs.StringVar(&f.evalData, "eval-data", "", dataUsage["eval-data"])
	fs.StringVar(&f.splitColumn, "split-column", "", dataUsage["split-column"])
	fs.IntVar(&f.nFeatures, "features", 0, "time the first `K` features only (0: all)")
	fs.IntVar(&f.rows, "rows", 0, "use a seeded subsample of `N` rows (0: all)")
	fs.StringVar(&f.backend, "backend", "mlp", "built-in backend of the model (mlp, cnn, linear, forest)")
	fs.StringVar(&f.plugin, "plugin", "", "backend plugin `executable` (a PyTorch model: the lazyvi-torch command of plugins/torch), instead of --backend")
	fs.BoolVar(&f.process, "backend-process", false, dataUsage["backend-process"])
	fs.StringVar(&f.hidden, "hidden", "50", "hidden widths of the MLP, comma-separated (the cnn's dense width when given)")
	fs.StringVar(&f.image, "image", "", "the features are the pixels of an `HxW` image, row-major (backend cnn)")
	fs.IntVar(&f.epochs, "epochs", 0, "the model's maximum training `epochs` (0: the backend's default)")
	fs.StringVar(&f.estimators, "estimators", "lazy,dropout,retrain", "comma-separated estimators to time (retrain is the reference)")
	fs.IntVar(&f.workers, "workers", runtime.NumCPU(), "features estimated concurrently")
	fs.IntVar(&f.lazyMem, "lazy-mem", 0, "lazy's memory bound per worker in `MiB` (0: its default, 1024)")
	fs.StringVar(&f.lazyPrecision, "lazy-precision", "single", "`precision` of lazy's work at scale (the matrix-free solves' Jacobian products, the penalty search's kernels, the train rows' residuals): single (where the backend has it, faster) or double")
	fs.Int64Var(&f.seed, "seed", 1, "seed of the subsample, split and models")
	fs.StringVar(&f.format, "format", "table", "output format: table or json")
	fs.StringVar(&f.out, "out", "", "write the output to `FILE` (atomically) instead of stdout")
}

// check checks the flags and returns the backend and the configured
// estimators; set holds the flags given.
func (f *benchDataFlags) check(set map[string]bool) (backendSpec, []framework.Estimator, error) {
	switch {
	case f.data == "":
		return backendSpec{}, nil, framework.Usagef("bench data: --data FILE is required")
	case f.format != "table" && f.format != "json":
		return backendSpec{}, nil, framework.Usagef("bench data: unknown --format %q (want table or json)", f.format)
	case f.nFeatures < 0 || f.rows < 0 || f.epochs < 0 || f.lazyMem < 0:
		return backendSpec{}, nil, framework.Usagef("bench data: --features, --rows, --epochs and --lazy-mem must be at least 0")
	case f.workers < 1:
		return backendSpec{}, nil, framework.Usagef("--workers must be at least 1, got %d", f.workers)
	}
	if f.out != "" {
		if err := checkOutDir("--out", f.out); err != nil {
			return backendSpec{}, nil, err
		}
	}
	spec, err := newBackendSpec(f.backend, set["backend"], f.plugin)
	if err != nil {
		return backendSpec{}, nil, err
	}
	spec.process = f.process
	ests, err := pipeline.LookupEstimators(f.estimators)
	if err != nil {
		return backendSpec{}, nil, err
	}
	if !slices.ContainsFunc(ests, func(e framework.Estimator) bool { return e.Name() == "retrain" }) {
		return backendSpec{}, nil, framework.Usagef("bench data: --estimators must include retrain, the reference")
	}
	settings := map[string]string{"lazy-precision": f.lazyPrecision}
	if f.lazyMem > 0 {
		settings["lazy-mem"] = strconv.Itoa(f.lazyMem)
	}
	ests, err = pipeline.ConfigureEstimators(ests, settings)
	return spec, ests, err
}

// load reads --data (and --eval-data or --split-column) and subsamples
// --rows of it.
func (f *benchDataFlags) load(ctx context.Context) (*dataio.Dataset, []int, error) {
	ef := dataFlags{data: f.data, evalData: f.evalData, splitColumn: f.splitColumn, target: f.target}
	if err := ef.checkEval(); err != nil {
		return nil, nil, err
	}
	d, part, err := loadEvalData(ctx, f.data, f.evalData, f.splitColumn, dataio.PrepareOptions{Target: f.target})
	if err != nil {
		return nil, nil, err
	}
	if pipeline.Folds(part) >= 2 {
		return nil, nil, framework.Usagef("--split-column %s has fold numbers; vi bench data uses one train/evaluation split: mark the rows train or eval", f.splitColumn)
	}
	if _, err := d.Column(f.target); f.target != "" && err != nil {
		return nil, nil, err
	}
	d, part = bench.Subsample(d, part, f.rows, f.seed)
	return d, part, nil
}

func (f *benchDataFlags) run(ctx context.Context, a *app) error {
	set := map[string]bool{}
	f.fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	spec, ests, err := f.check(set)
	if err != nil {
		return err
	}
	d, part, err := f.load(ctx)
	if err != nil {
		return err
	}
	prog := progress.New(a.stderr, progress.Auto, "bench data")
	defer prog.Close()
	be, closeBackend, err := spec.openLogged(ctx, a.stderr, prog)
	if err != nil {
		return err
	}
	defer closeBackend()
	// --hidden's default is the MLP's; another backend gets it only
	// when it is given (the cnn's dense layer has its own default).
	opts := map[string]string{}
	if set["hidden"] || (spec.plugin == "" && spec.name == "mlp") {
		opts["hidden"] = f.hidden
	}
	if f.image != "" {
		opts["image"] = f.image
	}
	if f.epochs > 0 {
		opts["epochs"] = strconv.Itoa(f.epochs)
	}
	name := spec.name
	if name == "mlp" && spec.plugin == "" {
		name = "" // the report's default
	}
	prog.SetStatus("bench data: training the full model")
	rep, err := bench.Data(ctx, bench.Input{Data: d, Partition: part, Target: f.target, Backend: name},
		bench.Options{Backend: be, Options: opts, Estimators: ests, Workers: f.workers, Features: f.nFeatures, Seed: f.seed, Progress: prog.Update})
	if err != nil {
		return err
	}
	prog.Clear()
	buf, err := render(f.format, rep, func(w io.Writer) { bench.WriteDataTable(w, rep) })
	if err != nil {
		return err
	}
	return a.emit(f.out, buf)
}
