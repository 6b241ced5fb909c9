package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"

	"github.com/lazyvi/lazyvi/backends/mlp"
	"github.com/lazyvi/lazyvi/bench"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/internal/progress"
	"github.com/lazyvi/lazyvi/pipeline"
	"github.com/lazyvi/lazyvi/plot"
	"github.com/lazyvi/lazyvi/simulate"
)

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
	fs.StringVar(&f.lazyPrecision, "lazy-precision", "single", "`precision` of lazy's work at scale (the matrix-free solves' Jacobian products, the penalty search's kernels, the train rows' residuals): single (where the backend has it, faster) or double")
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
