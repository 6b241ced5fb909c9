package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/lazyvi/lazyvi/backends/mlp"
	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/internal/progress"
	"github.com/lazyvi/lazyvi/pipeline"
	"github.com/lazyvi/lazyvi/simulate"
)

// The speed cases time every estimator on one of the paper's simulated
// settings, through the same plugin transport as vi estimate, and report the
// cost per feature and the accuracy.
var speedBenches = []*benchCase{
	speedBench("linear", "the paper's linear setting (5.1: p = 6, Corr(x1, x2) = rho)", 5000),
	speedBench("binary", "the paper's binary setting (5.2: p = 4, probit, accuracy)", 1000),
	speedBench("highdim", "the paper's high-dimensional setting (5.3: p = 100)", 1000),
}

// speedBench is the speed case of a simulated setting with n rows by
// default.
func speedBench(setting, short string, n int) *benchCase {
	return &benchCase{Name: setting, Short: short, Setup: func(fs *flag.FlagSet) func(context.Context, *app) error {
		return speedCase(fs, setting, n)
	}}
}

// speedRun is one size of a speed case: the --format json contract.
type speedRun struct {
	Case        string        `json:"case"`
	Backend     string        `json:"backend,omitempty"` // vi bench data's --backend (or plugin), "" for mlp
	N           int           `json:"n"`
	P           int           `json:"p"`
	Width       string        `json:"width"`
	Epochs      int           `json:"epochs,omitempty"` // the MLP's epoch cap when --epochs set it
	Workers     int           `json:"workers"`
	FullSeconds float64       `json:"full_seconds"`
	Results     []speedResult `json:"results"`
}

type speedResult struct {
	Estimator string `json:"estimator"`
	Features  int    `json:"features"`
	// SecondsTotal is the wall time of the estimator over all features
	// (Workers at a time); SecondsPerFeature is SecondsTotal/Features, the
	// throughput; SecondsPerFeatureMedian the median of each feature's own
	// wall time.
	SecondsTotal            float64 `json:"seconds_total"`
	SecondsPerFeature       float64 `json:"seconds_per_feature"`
	SecondsPerFeatureMedian float64 `json:"seconds_per_feature_median"`
	// ErrorMean is the mean over features of |VI - truth| (ErrorAgainst
	// "truth") or, where the truth is unknown, of |VI - VI(retrain)|.
	ErrorMean    *float64 `json:"error_mean,omitempty"`
	ErrorAgainst string   `json:"error_against,omitempty"`
	// At scale (lazy's matrix-free solves): the rows its penalty was
	// chosen on, the Krylov steps and counted flops of its final solves
	// summed over the features, and those flops per second of the
	// features' own wall time (a lower bound on the solves' rate: the
	// time includes the penalty search and the transport).
	CVRows      int     `json:"cv_rows,omitempty"`
	KrylovSteps int     `json:"krylov_steps,omitempty"`
	Flops       float64 `json:"flops,omitempty"`
	GFlopsRate  float64 `json:"gflop_per_s,omitempty"`
	// Steps is where the estimator's time went (framework.Stages): each
	// step's seconds summed over the workers, its share of all the
	// steps' seconds, its counted flops and their rate; StepsGFlops is
	// the rate of all the counted flops over the seconds of the steps
	// that count them.
	Steps       []speedStep `json:"steps,omitempty"`
	StepsGFlops float64     `json:"steps_gflop_per_s,omitempty"`
}

// speedStep is one step of an estimator's reductions.
type speedStep struct {
	Name    string  `json:"name"`
	Seconds float64 `json:"seconds"`
	Share   float64 `json:"share"`
	Flops   float64 `json:"flops,omitempty"`
	GFlops  float64 `json:"gflop_per_s,omitempty"`
}

// speedSteps summarises the stages of an estimator's reductions.
func speedSteps(totals []framework.StageTotal) (steps []speedStep, gflops float64) {
	var secs, counted, countedSecs float64
	for _, t := range totals {
		secs += t.Seconds
	}
	for _, t := range totals {
		st := speedStep{Name: t.Name, Seconds: t.Seconds, Flops: t.Flops}
		if secs > 0 {
			st.Share = t.Seconds / secs
		}
		if t.Flops > 0 && t.Seconds > 0 {
			st.GFlops = t.Flops / t.Seconds / 1e9
			counted += t.Flops
			countedSecs += t.Seconds
		}
		steps = append(steps, st)
	}
	if countedSecs > 0 {
		gflops = counted / countedSecs / 1e9
	}
	return steps, gflops
}

func speedCase(fs *flag.FlagSet, setting string, defaultN int) func(context.Context, *app) error {
	ns := fs.String("n", strconv.Itoa(defaultN), "number of rows; a comma-separated list sweeps sizes")
	widths := fs.String("width", "50", "hidden widths of the MLP; a comma-separated list of `layers` separated by ':' sweeps them (\"50,100:50\")")
	rho := fs.Float64("rho", simulate.DefaultRho(setting), "Corr(x1, x2) (linear and highdim)")
	estList := fs.String("estimators", "lazy,dropout,retrain", "comma-separated estimators to time")
	workers := fs.Int("workers", runtime.NumCPU(), "features estimated concurrently")
	folds := fs.Int("folds", 0, "lazy's cross-validation folds (0: the framework's default)")
	lambda := fs.Float64("lambda", 0, "fix lazy's ridge penalty (0: by cross-validation)")
	epochs := fs.Int("epochs", 0, fmt.Sprintf("the MLP's maximum training `epochs`, for the full model and retrain alike (0: the backend's default, a cap of %d that its validation stopping usually ends far earlier)", mlp.DefaultEpochs))
	seed := fs.Int64("seed", 1, "seed of the data, split and models")
	format := fs.String("format", "table", "output format: table or json")
	out := fs.String("out", "", "write the output to `FILE` (atomically) instead of stdout")
	plotPath := fs.String("plot", "", "also draw seconds per feature against error (and, for a sweep, against size) into `FILE`.png or .svg")
	// Scale: time the first K features only; lazy's memory bound.
	nFeatures := fs.Int("features", 0, "time the first `K` features only (0: all)")
	lazyMem := fs.Int("lazy-mem", 0, "lazy's memory bound per worker in `MiB` (0: its default, 1024)")
	process := fs.Bool("backend-process", false, dataUsage["backend-process"])
	lazyPrecision := fs.String("lazy-precision", "single", "`precision` of lazy's work at scale (the matrix-free solves' Jacobian products, the penalty search's kernels): single (where the backend has it, faster) or double")
	return func(ctx context.Context, a *app) error {
		plotFormat := ""
		if *plotPath != "" {
			var err error
			if plotFormat, err = speedPlotFormat(*plotPath); err != nil {
				return err
			}
			if err := checkOutDir(*plotPath); err != nil {
				return err
			}
		}
		if *format != "table" && *format != "json" {
			return framework.Usagef("bench %s: unknown --format %q (want table or json)", setting, *format)
		}
		if *out != "" {
			if err := checkOutDir(*out); err != nil {
				return err
			}
		}
		sizes, err := intList(*ns, "--n")
		if err != nil {
			return err
		}
		ests, err := lookupEstimators(*estList)
		if err != nil {
			return err
		}
		settings := map[string]string{}
		if *folds != 0 {
			settings["folds"] = strconv.Itoa(*folds)
		}
		if *lambda != 0 {
			settings["lambda"] = strconv.FormatFloat(*lambda, 'g', -1, 64)
		}
		if *lazyMem != 0 {
			settings["lazy-mem"] = strconv.Itoa(*lazyMem)
		}
		settings["lazy-precision"] = *lazyPrecision
		if *nFeatures < 0 {
			return framework.Usagef("--features must be at least 0, got %d", *nFeatures)
		}
		if ests, err = configure(ests, settings); err != nil {
			return err
		}
		if *workers < 1 {
			return framework.Usagef("--workers must be at least 1, got %d", *workers)
		}
		if *epochs < 0 {
			return framework.Usagef("--epochs must be at least 0, got %d", *epochs)
		}
		prog := progress.New(a.stderr, progress.Auto, "bench "+setting)
		defer prog.Close()
		be, closeBackend, err := backendSpec{name: "mlp", process: *process}.openLogged(ctx, a.stderr, prog)
		if err != nil {
			return err
		}
		defer closeBackend()

		var runs []speedRun
		for _, n := range sizes {
			for _, w := range strings.Split(*widths, ",") {
				hidden := strings.ReplaceAll(strings.TrimSpace(w), ":", ",")
				sim, err := simulate.Generate(setting, n, *rho, *seed)
				if err != nil {
					return err
				}
				prog.SetStatus(fmt.Sprintf("bench %s: n %d, width %s: training the full model", setting, n, hidden))
				opts := map[string]string{"hidden": hidden}
				if *epochs > 0 {
					opts["epochs"] = strconv.Itoa(*epochs)
				}
				r, err := speedOnce(ctx, sim, benchRun{be: be, opts: opts, ests: ests, workers: *workers, nFeatures: *nFeatures, seed: *seed, prog: prog})
				if err != nil {
					return err
				}
				runs = append(runs, r)
			}
		}
		prog.Clear()
		var buf bytes.Buffer
		if *format == "json" {
			var v any = runs
			if len(runs) == 1 {
				v = runs[0]
			}
			if err := writeJSON(&buf, v); err != nil {
				return err
			}
		} else {
			writeSpeedTable(&buf, runs)
		}
		if err := a.writePlot(*plotPath, "plot", func(w io.Writer) error { return writeSpeedPlot(w, runs, plotFormat) }); err != nil {
			return err
		}
		return a.emit(*out, &buf)
	}
}

// speedOnce trains the full model once and times each estimator over all
// features, one estimator at a time so that each one's wall time is its own.
func speedOnce(ctx context.Context, sim *simulate.Data, r benchRun) (speedRun, error) {
	d := &dataio.Dataset{Source: sim.Setting, Names: sim.Names, X: sim.X}
	truth := sim.Truth
	if sim.Setting == "highdim" {
		// The truth by Monte Carlo, once per process. Retrain is no
		// reference here: a second retrain from another seed is further
		// from it than lazy or dropout are
		// (research/2026-11-27-highdim-reference.md).
		truth = simulate.HighDimTruth(sim.Rho)
	}
	run, _, err := timeEstimators(ctx, benchInput{data: d, measure: sim.Measure, truth: truth}, r)
	run.Case = sim.Setting
	return run, err
}

// benchInput is what the estimators are timed on: the data, its response
// (target "" is the last column), the measure ("" is the task's default)
// and the true VI of its columns when known.
type benchInput struct {
	data            *dataio.Dataset
	partition       []int // explicit evaluation rows (pipeline.Config.Partition); nil: the seeded split
	target, measure string
	truth           []float64
	backend         string // the backend's name for the report and the problem ("": mlp)
}

// benchRun is how the estimators are timed: the backend and its options,
// the estimators, the workers, the features (the first nFeatures; 0: all),
// the seed and the progress bar.
type benchRun struct {
	be                 framework.Backend
	opts               map[string]string
	ests               []framework.Estimator
	workers, nFeatures int
	seed               int64
	prog               *progress.Meter
}

// timeEstimators trains the full model on in once and times each
// estimator over its first nFeatures features (0: all), one estimator at a
// time so that each one's wall time is its own; it returns the VIs by
// estimator too.
func timeEstimators(ctx context.Context, in benchInput, r benchRun) (speedRun, map[string][]float64, error) {
	be, opts, ests, workers, nFeatures, seed, prog := r.be, r.opts, r.ests, r.workers, r.nFeatures, r.seed, r.prog
	start := time.Now()
	name := in.backend
	if name == "" {
		name = "mlp"
	}
	p, err := pipeline.Prepare(ctx, in.data, pipeline.Config{Target: in.target, Backend: be, BackendName: name, Options: opts, Seed: seed, Partition: in.partition})
	if err != nil {
		return speedRun{}, nil, err
	}
	defer p.Close()
	n, _ := in.data.X.Dims()
	run := speedRun{Backend: in.backend, N: n, P: len(p.FeatureNames), Width: opts["hidden"], Workers: workers, FullSeconds: time.Since(start).Seconds()}
	if e, ok := opts["epochs"]; ok {
		run.Epochs, _ = strconv.Atoi(e)
	}
	measure := in.measure
	if measure == "" {
		measure = framework.DefaultMeasure(p.Task)
	}
	m, err := framework.LookupMeasure(measure)
	if err != nil {
		return speedRun{}, nil, err
	}
	feats := p.Features()
	if nFeatures > 0 && nFeatures < len(feats) {
		feats = feats[:nFeatures]
	}
	truth := in.truth
	if truth != nil {
		truth = truth[:len(feats)]
	}
	vis := map[string][]float64{}
	for _, e := range ests {
		start := time.Now()
		var stages framework.Stages
		res, err := pipeline.Estimate(framework.WithStages(ctx, &stages), p, m, []framework.Estimator{e}, feats, pipeline.EstimateOptions{InferOptions: inference.InferOptions{Inference: inference.Plain}, Workers: workers, Progress: prog.Update})
		if err != nil {
			return speedRun{}, nil, err
		}
		total := time.Since(start).Seconds()
		secs := make([]float64, len(res))
		vi := make([]float64, len(res))
		sr := speedResult{Estimator: e.Name(), Features: len(res), SecondsTotal: total, SecondsPerFeature: total / float64(len(res))}
		sr.Steps, sr.StepsGFlops = speedSteps(stages.Totals())
		busy := 0.0
		for i, r := range res {
			secs[i], vi[i] = r.Seconds, r.VI
			busy += r.Seconds
			if v, ok := r.Get("cv_rows"); ok {
				sr.CVRows = int(v.(float64))
			}
			if v, ok := r.Get("krylov_steps"); ok {
				sr.KrylovSteps += int(v.(float64))
			}
			if v, ok := r.Get("flops"); ok {
				sr.Flops += v.(float64)
			}
		}
		if sr.Flops > 0 && busy > 0 {
			sr.GFlopsRate = sr.Flops / busy / 1e9
		}
		sr.SecondsPerFeatureMedian = median(secs)
		vis[e.Name()] = vi
		run.Results = append(run.Results, sr)
	}
	for i := range run.Results {
		r := &run.Results[i]
		switch ref := vis["retrain"]; {
		case truth != nil:
			r.ErrorMean, r.ErrorAgainst = meanAbsDiff(vis[r.Estimator], truth), "truth"
		case ref != nil && r.Estimator != "retrain":
			r.ErrorMean, r.ErrorAgainst = meanAbsDiff(vis[r.Estimator], ref), "retrain"
		}
	}
	return run, vis, nil
}

func writeSpeedTable(w *bytes.Buffer, runs []speedRun) {
	for k, run := range runs {
		if k > 0 {
			w.WriteString("\n")
		}
		epochs := ""
		if run.Epochs > 0 {
			epochs = fmt.Sprintf("  epochs %d", run.Epochs)
		}
		backend := ""
		if run.Backend != "" {
			backend = "  backend " + run.Backend
		}
		width := ""
		if run.Width != "" {
			width = "  width " + run.Width
		}
		fmt.Fprintf(w, "case %s%s  n %d  p %d%s%s  workers %d  full model %.2fs\n\n", run.Case, backend, run.N, run.P, width, epochs, run.Workers, run.FullSeconds)
		tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "estimator\tfeatures\ttotal s\ts/feature\tmedian s\terror\t")
		for _, r := range run.Results {
			e := "-"
			if r.ErrorMean != nil {
				e = fmt.Sprintf("%.4g (vs %s)", *r.ErrorMean, r.ErrorAgainst)
			}
			fmt.Fprintf(tw, "%s\t%d\t%.3f\t%.4f\t%.4f\t%s\t\n", r.Estimator, r.Features, r.SecondsTotal, r.SecondsPerFeature, r.SecondsPerFeatureMedian, e)
		}
		tw.Flush()
		writeSteps(w, run.Results)
		for _, r := range run.Results {
			if r.Flops > 0 {
				fmt.Fprintf(w, "\n%s at scale: penalty on %d rows; %d Krylov steps (the final solves and any search on all the rows), %.1f GFlop counted, %.2f GFLOP/s of its features' wall time\n",
					r.Estimator, r.CVRows, r.KrylovSteps, r.Flops/1e9, r.GFlopsRate)
			}
		}
	}
	if len(runs) > 0 {
		fmt.Fprintf(w, "\n%s\n", speedColumns(runs[0].Workers))
	}
}

// speedColumns says what the speed table's columns are.
func speedColumns(workers int) string {
	return fmt.Sprintf(`total s: wall time over the features, %d at a time (--workers); s/feature: total s / features, the throughput;
median s: the median of each feature's own wall time, above s/feature when features run in parallel;
error: mean |VI - truth| over the features, or |VI - retrain's VI| where the truth is unknown (lower is better)`, workers)
}

// writeSteps writes, per estimator, where its time went: each step's
// share of the steps' seconds and the rate of its counted flops ("-" where
// none are counted), and the rate of all its counted flops.
func writeSteps(w *bytes.Buffer, results []speedResult) {
	any := false
	for _, r := range results {
		any = any || len(r.Steps) > 0
	}
	if !any {
		return
	}
	fmt.Fprintln(w, "\nwhere the time goes (share of each estimator's step seconds; GFLOP/s of the flops counted):")
	for _, r := range results {
		if len(r.Steps) == 0 {
			continue
		}
		parts := make([]string, len(r.Steps))
		for i, st := range r.Steps {
			rate := "-"
			if st.GFlops > 0 {
				rate = fmt.Sprintf("%.2f GFLOP/s", st.GFlops)
			}
			parts[i] = fmt.Sprintf("%s %.0f%% (%s)", st.Name, 100*st.Share, rate)
		}
		overall := "no flops counted"
		if r.StepsGFlops > 0 {
			overall = fmt.Sprintf("%.2f GFLOP/s counted", r.StepsGFlops)
		}
		fmt.Fprintf(w, "  %s: %s; %s\n", r.Estimator, strings.Join(parts, ", "), overall)
	}
}

func median(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	s := slices.Clone(x)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func meanAbsDiff(a, b []float64) *float64 {
	s := 0.0
	for i := range a {
		s += math.Abs(a[i] - b[i])
	}
	s /= float64(len(a))
	return &s
}

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
