package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/lazyvi/lazyvi/backends/mlp"
	"github.com/lazyvi/lazyvi/bench"
	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/internal/progress"
	"github.com/lazyvi/lazyvi/pipeline"
	"github.com/lazyvi/lazyvi/plot"
	"github.com/lazyvi/lazyvi/simulate"
	"github.com/lazyvi/lazyvi/study/coverage"
)

func newBenchCommand() *Command {
	return &Command{
		UsageLine: "bench <case> [flags]",
		Short:     "benchmark the estimators on named cases",
		Long: `Bench runs a named benchmark case and reports what it measures. Run
"vi bench" for the list of cases and "vi bench <case> --help" for a case's
flags.`,
		Run: runBench,
	}
}

// benchCase is one case of vi bench. Setup defines the case's flags on fs
// (a new flag set for every run) and returns the function that runs the
// case once fs is parsed; each case lives in its own file.
type benchCase struct {
	Name  string
	Short string
	Setup func(fs *flag.FlagSet) func(ctx context.Context, a *app) error
}

// benchCases are vi bench's cases in the order it lists them: the study
// harness of the inference options (coverage, study/coverage), then
// the user-facing cases, the user's data and the paper's settings.
var benchCases = append([]*benchCase{coverageBench, dataBench}, speedBenches...)

func runBench(ctx context.Context, a *app, args []string) error {
	if len(args) == 0 {
		listBenchCases(a.stdout)
		return nil
	}
	var c *benchCase
	for _, bc := range benchCases {
		if bc.Name == args[0] {
			c = bc
		}
	}
	if c == nil {
		names := make([]string, len(benchCases))
		for i, bc := range benchCases {
			names[i] = bc.Name
		}
		return framework.Usagef("bench: unknown case %q (cases: %s)", args[0], strings.Join(names, ", "))
	}
	fs := flag.NewFlagSet("bench "+c.Name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	run := c.Setup(fs)
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(a.stdout, "usage: vi bench %s [flags]\n\n%s\n\nFlags:\n", c.Name, c.Short)
			printFlags(a.stdout, fs)
			return nil
		}
		return framework.Usagef("bench %s: %v (run 'vi bench %s --help')", c.Name, err, c.Name)
	}
	if fs.NArg() > 0 {
		return framework.Usagef("bench %s: unexpected argument %q", c.Name, fs.Arg(0))
	}
	return run(ctx, a)
}

func listBenchCases(w io.Writer) {
	fmt.Fprint(w, "usage: vi bench <case> [flags]\n\nThe cases are:\n\n")
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	for _, c := range benchCases {
		fmt.Fprintf(tw, "\t%s\t%s\n", c.Name, c.Short)
	}
	tw.Flush()
}

// coverageBench is the study case of vi bench (study/coverage): the
// coverage, size and power of the inference candidates over repetitions
// of a setting with a known truth, the study of the inference options in
// docs/inference.md.
var coverageBench = &benchCase{
	Name:  "coverage",
	Short: "coverage, size and power of the inference candidates over repetitions of a setting with a known truth",
	Setup: func(fs *flag.FlagSet) func(context.Context, *app) error {
		f := &coverageFlags{}
		f.register(fs)
		return f.run
	},
}

// coverageFlags are the flags of vi bench coverage: the study's
// (coverage.Flags) and the output's.
type coverageFlags struct {
	study       coverage.Flags
	format, out string
}

func (f *coverageFlags) register(fs *flag.FlagSet) {
	f.study.Register(fs)
	fs.StringVar(&f.format, "format", "table", "output format: table or json")
	fs.StringVar(&f.out, "out", "", "write the output to `FILE` (atomically) instead of stdout")
}

// config checks the flags, the output's first, and returns the study they
// ask for.
func (f *coverageFlags) config(ctx context.Context) (coverage.Config, error) {
	if f.format != "table" && f.format != "json" {
		return coverage.Config{}, framework.Usagef("bench coverage: unknown --format %q (want table or json)", f.format)
	}
	if f.out != "" {
		if err := checkOutDir("--out", f.out); err != nil {
			return coverage.Config{}, err
		}
	}
	c, err := f.study.Config(ctx)
	if err != nil {
		return c, runError(ctx, err)
	}
	return c, nil
}

func (f *coverageFlags) run(ctx context.Context, a *app) error {
	c, err := f.config(ctx)
	if err != nil {
		return err
	}
	prog := progress.New(a.stderr, progress.Auto, "bench coverage")
	prog.SetUnit("data sets")
	defer prog.Close()
	c.Progress = prog.Update
	rep, err := coverage.Run(ctx, c)
	if err != nil {
		return err
	}
	prog.Clear()
	buf, err := render(f.format, rep, rep.WriteTable)
	if err != nil {
		return err
	}
	return a.emit(f.out, buf)
}

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
	fs.StringVar(&f.lazyPrecision, "lazy-precision", "single", "`precision` of lazy's work at scale (the matrix-free solves' Jacobian products, the penalty search's kernels): single (where the backend has it, faster) or double")
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

// The speed cases time every estimator on one of the paper's simulated
// settings (bench.Simulated) and report the cost per feature and the
// accuracy.
var speedBenches = []*benchCase{
	speedBench("linear", "the paper's linear setting (5.1: p = 6, Corr(x1, x2) = rho)", 5000),
	speedBench("binary", "the paper's binary setting (5.2: p = 4, probit, accuracy)", 1000),
	speedBench("highdim", "the paper's high-dimensional setting (5.3: p = 100)", 1000),
}

// speedBench is the speed case of a simulated setting with n rows by
// default.
func speedBench(setting, short string, n int) *benchCase {
	return &benchCase{Name: setting, Short: short, Setup: func(fs *flag.FlagSet) func(context.Context, *app) error {
		f := &speedFlags{setting: setting}
		f.register(fs, n)
		return f.run
	}}
}

// speedFlags are the flags of a speed case.
type speedFlags struct {
	setting                              string
	ns, widths, estimators               string
	rho, lambda                          float64
	workers, folds, epochs, nFeatures    int
	lazyMem                              int
	seed                                 int64
	format, out, plotPath, lazyPrecision string
	process                              bool
}

func (f *speedFlags) register(fs *flag.FlagSet, defaultN int) {
	fs.StringVar(&f.ns, "n", strconv.Itoa(defaultN), "number of rows; a comma-separated list sweeps sizes")
	fs.StringVar(&f.widths, "width", "50", "hidden widths of the MLP; a comma-separated list of `layers` separated by ':' sweeps them (\"50,100:50\")")
	fs.Float64Var(&f.rho, "rho", simulate.DefaultRho(f.setting), "Corr(x1, x2) (linear and highdim)")
	fs.StringVar(&f.estimators, "estimators", "lazy,dropout,retrain", "comma-separated estimators to time")
	fs.IntVar(&f.workers, "workers", runtime.NumCPU(), "features estimated concurrently")
	fs.IntVar(&f.folds, "folds", 0, "lazy's cross-validation folds (0: the framework's default)")
	fs.Float64Var(&f.lambda, "lambda", 0, "fix lazy's ridge penalty (0: by cross-validation)")
	fs.IntVar(&f.epochs, "epochs", 0, fmt.Sprintf("the MLP's maximum training `epochs`, for the full model and retrain alike (0: the backend's default, a cap of %d that its validation stopping usually ends far earlier)", mlp.DefaultEpochs))
	fs.Int64Var(&f.seed, "seed", 1, "seed of the data, split and models")
	fs.StringVar(&f.format, "format", "table", "output format: table or json")
	fs.StringVar(&f.out, "out", "", "write the output to `FILE` (atomically) instead of stdout")
	fs.StringVar(&f.plotPath, "plot", "", "also draw seconds per feature against error (and, for a sweep, against size) into `FILE`.png or .svg")
	// Scale: time the first K features only; lazy's memory bound.
	fs.IntVar(&f.nFeatures, "features", 0, "time the first `K` features only (0: all)")
	fs.IntVar(&f.lazyMem, "lazy-mem", 0, "lazy's memory bound per worker in `MiB` (0: its default, 1024)")
	fs.BoolVar(&f.process, "backend-process", false, dataUsage["backend-process"])
	fs.StringVar(&f.lazyPrecision, "lazy-precision", "single", "`precision` of lazy's work at scale (the matrix-free solves' Jacobian products, the penalty search's kernels): single (where the backend has it, faster) or double")
}

// check checks the flags and returns the --plot format, the sizes and the
// configured estimators.
func (f *speedFlags) check() (plotFormat string, sizes []int, ests []framework.Estimator, err error) {
	if f.plotPath != "" {
		if plotFormat, err = speedPlotFormat(f.plotPath); err != nil {
			return "", nil, nil, err
		}
		if err := checkOutDir("--plot", f.plotPath); err != nil {
			return "", nil, nil, err
		}
	}
	if f.format != "table" && f.format != "json" {
		return "", nil, nil, framework.Usagef("bench %s: unknown --format %q (want table or json)", f.setting, f.format)
	}
	if f.out != "" {
		if err := checkOutDir("--out", f.out); err != nil {
			return "", nil, nil, err
		}
	}
	if sizes, err = intList(f.ns, "--n"); err != nil {
		return "", nil, nil, err
	}
	if ests, err = pipeline.LookupEstimators(f.estimators); err != nil {
		return "", nil, nil, err
	}
	settings := map[string]string{"lazy-precision": f.lazyPrecision}
	if f.folds != 0 {
		settings["folds"] = strconv.Itoa(f.folds)
	}
	if f.lambda != 0 {
		settings["lambda"] = strconv.FormatFloat(f.lambda, 'g', -1, 64)
	}
	if f.lazyMem != 0 {
		settings["lazy-mem"] = strconv.Itoa(f.lazyMem)
	}
	if f.nFeatures < 0 {
		return "", nil, nil, framework.Usagef("--features must be at least 0, got %d", f.nFeatures)
	}
	if ests, err = pipeline.ConfigureEstimators(ests, settings); err != nil {
		return "", nil, nil, err
	}
	if f.workers < 1 {
		return "", nil, nil, framework.Usagef("--workers must be at least 1, got %d", f.workers)
	}
	if f.epochs < 0 {
		return "", nil, nil, framework.Usagef("--epochs must be at least 0, got %d", f.epochs)
	}
	return plotFormat, sizes, ests, nil
}

func (f *speedFlags) run(ctx context.Context, a *app) error {
	plotFormat, sizes, ests, err := f.check()
	if err != nil {
		return err
	}
	prog := progress.New(a.stderr, progress.Auto, "bench "+f.setting)
	defer prog.Close()
	be, closeBackend, err := backendSpec{name: "mlp", process: f.process}.openLogged(ctx, a.stderr, prog)
	if err != nil {
		return err
	}
	defer closeBackend()
	sweep := bench.Sweep{Setting: f.setting, Sizes: sizes, Widths: bench.Widths(f.widths), Rho: f.rho, Epochs: f.epochs, Status: prog.SetStatus}
	runs, err := sweep.Run(ctx, bench.Options{Backend: be, Estimators: ests, Workers: f.workers, Features: f.nFeatures, Seed: f.seed, Progress: prog.Update})
	if err != nil {
		return err
	}
	prog.Clear()
	var v any = runs
	if len(runs) == 1 {
		v = runs[0]
	}
	buf, err := render(f.format, v, func(w io.Writer) { bench.WriteTable(w, runs) })
	if err != nil {
		return err
	}
	if err := a.writePlot(f.plotPath, "plot", func(w io.Writer) error { return plot.Speed(runs).Write(w, plotFormat) }); err != nil {
		return err
	}
	return a.emit(f.out, buf)
}

// speedPlotFormat checks a --plot path of vi bench and returns its format.
func speedPlotFormat(path string) (string, error) {
	f, err := plot.Format(path)
	if err != nil || f == "pdf" {
		return "", framework.Usagef("--plot %s: want a .png or .svg file", path)
	}
	return f, nil
}

// intList parses a comma-separated list of positive integers.
func intList(s, flagName string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 1 {
			return nil, framework.Usagef("%s: want positive integers separated by commas, got %q", flagName, s)
		}
		out = append(out, v)
	}
	return out, nil
}
