package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math"
	"runtime"
	"strconv"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/simulate"
	"gonum.org/v1/gonum/stat"
)

// The coverage case repeats a simulated setting with a known truth and
// reports, per estimator and feature, how often the intervals cover the
// truth and how far the estimates sit from it, under plain and split
// inference computed from the same fitted models.
func init() {
	addBenchCase(&benchCase{
		Name:  "coverage",
		Short: "empirical coverage and bias of the intervals, plain vs split inference, over repetitions of a simulated setting",
		Setup: coverageCase,
	})
}

// coverageReport is the --format json contract of vi bench coverage.
type coverageReport struct {
	Setting    string        `json:"setting"`
	N          int           `json:"n"`
	Rho        float64       `json:"rho"`
	Reps       int           `json:"reps"`
	CrossFit   int           `json:"crossfit,omitempty"`
	Level      float64       `json:"level"`
	Measure    string        `json:"measure"`
	Hidden     string        `json:"hidden,omitempty"`
	Seconds    float64       `json:"seconds"`
	Inferences []string      `json:"inferences"`
	Rows       []coverageRow `json:"rows"`
}

// coverageRow is one estimator and feature under one inference, over reps.
type coverageRow struct {
	Estimator string  `json:"estimator"`
	Feature   string  `json:"feature"`
	Inference string  `json:"inference"`
	Truth     float64 `json:"truth"`
	MeanVI    float64 `json:"mean_vi"`
	Bias      float64 `json:"bias"`     // mean VI - truth
	SDVI      float64 `json:"sd_vi"`    // empirical sd of the estimates
	MeanSE    float64 `json:"mean_se"`  // mean reported standard error
	Coverage  float64 `json:"coverage"` // share of intervals containing the truth
	// Reject05 is the share of p-values below 0.05 (H0: VI <= 0): the
	// type I error for a null feature, the power otherwise.
	Reject05 float64 `json:"reject_05"`
}

func coverageCase(fs *flag.FlagSet) func(context.Context, *app) error {
	setting := fs.String("setting", "linear", "simulated `setting`: linear or binary")
	reps := fs.Int("reps", 100, "number of repetitions (data sets)")
	n := fs.Int("n", 0, "rows per data set (0: 2000 for linear, 1000 for binary, as the paper's experiments)")
	rho := fs.Float64("rho", math.NaN(), "Corr(x1, x2) of the linear setting (default 0.5)")
	estList := fs.String("estimators", "lazy", "comma-separated estimators")
	crossfit := fs.Int("crossfit", 0, "cross-fitting folds (0: one train/evaluation split)")
	lazyFolds := fs.Int("folds", 0, "cross-validation folds for lazy's ridge penalty (0: the framework's default)")
	hidden := fs.String("hidden", "", "hidden widths of the MLP (backend default when empty)")
	level := fs.Float64("level", framework.DefaultLevel, "level of the intervals")
	workers := fs.Int("workers", runtime.NumCPU(), "repetitions run concurrently")
	seed := fs.Int64("seed", 1, "seed of the first repetition; repetition r uses seed+r")
	format := fs.String("format", "table", "output format: table or json")
	out := fs.String("out", "", "write the output to `FILE` (atomically) instead of stdout")
	return func(ctx context.Context, a *app) error {
		if *setting != "linear" && *setting != "binary" {
			return framework.Usagef("bench coverage: --setting must be linear or binary (a setting with a known truth), got %q", *setting)
		}
		if *format != "table" && *format != "json" {
			return framework.Usagef("bench coverage: unknown --format %q (want table or json)", *format)
		}
		if *out != "" {
			if err := checkOutDir(*out); err != nil {
				return err
			}
		}
		if *reps < 1 || *workers < 1 || *crossfit < 0 || *crossfit == 1 {
			return framework.Usagef("bench coverage: --reps and --workers must be positive and --crossfit 0 or at least 2")
		}
		if !(*level > 0 && *level < 1) {
			return framework.Usagef("--level must be in (0, 1), got %g", *level)
		}
		if math.IsNaN(*rho) {
			*rho = defaultRho(*setting)
		}
		if *n == 0 {
			*n = 2000
			if *setting == "binary" {
				*n = 1000
			}
		}
		ests, err := lookupEstimators(*estList)
		if err != nil {
			return err
		}
		if *lazyFolds != 0 {
			if ests, err = configure(ests, map[string]string{"folds": strconv.Itoa(*lazyFolds)}); err != nil {
				return err
			}
		}
		// The built-in backend in this process: the study is about the
		// statistics, not the transport.
		be, err := framework.LookupBackend("mlp")
		if err != nil {
			return err
		}
		opts := map[string]string{}
		if *hidden != "" {
			opts["hidden"] = *hidden
		}
		infs := []framework.Inference{framework.Plain, framework.Split}
		prog := a.newProgress(*format != "json", "bench coverage")
		defer prog.clear()
		start := time.Now()

		// results[r][i] are repetition r's results under infs[i].
		results := make([][][]framework.Result, *reps)
		var truth []float64
		var measure string
		var mu sync.Mutex
		var firstErr error
		done := 0
		jobs := make(chan int)
		var wg sync.WaitGroup
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		for w := 0; w < *workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for r := range jobs {
					res, tr, ms, err := coverageRep(ctx, be, opts, *setting, *n, *rho, *seed+int64(r), *crossfit, *level, ests, infs)
					mu.Lock()
					if err != nil {
						if firstErr == nil {
							firstErr = fmt.Errorf("repetition %d: %w", r+1, err)
							cancel()
						}
					} else {
						results[r], truth, measure = res, tr, ms
						done++
						prog.update(done, *reps)
					}
					mu.Unlock()
				}
			}()
		}
	feed:
		for r := 0; r < *reps; r++ {
			select {
			case jobs <- r:
			case <-ctx.Done():
				break feed
			}
		}
		close(jobs)
		wg.Wait()
		prog.clear()
		if firstErr != nil {
			return firstErr
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rep := coverageReport{Setting: *setting, N: *n, Rho: *rho, Reps: *reps, CrossFit: *crossfit, Level: *level,
			Measure: measure, Hidden: *hidden, Seconds: time.Since(start).Seconds()}
		for _, inf := range infs {
			rep.Inferences = append(rep.Inferences, inf.String())
		}
		nf := len(truth)
		for e := range ests {
			for f := 0; f < nf; f++ {
				for i, inf := range infs {
					rep.Rows = append(rep.Rows, summarise(results, e*nf+f, i, inf, truth[f]))
				}
			}
		}
		var buf bytes.Buffer
		if *format == "json" {
			if err := writeJSON(&buf, rep); err != nil {
				return err
			}
		} else {
			writeCoverageTable(&buf, &rep)
		}
		return a.emit(*out, &buf)
	}
}

// coverageRep simulates one data set, fits the full and reduced models once
// and infers under each inference.
func coverageRep(ctx context.Context, be framework.Backend, opts map[string]string, setting string, n int, rho float64, seed int64, crossfit int, level float64, ests []framework.Estimator, infs []framework.Inference) ([][]framework.Result, []float64, string, error) {
	sim, err := simulate.Generate(setting, n, rho, seed)
	if err != nil {
		return nil, nil, "", err
	}
	d := &framework.Dataset{Source: sim.Setting, Names: sim.Names, X: sim.X}
	cfg := framework.Config{Backend: be, BackendName: "mlp", Options: opts, Seed: seed}
	var folds []*framework.Problem
	if crossfit >= 2 {
		folds, err = framework.PrepareFolds(ctx, d, cfg, crossfit, 1)
	} else {
		var p *framework.Problem
		p, err = framework.Prepare(ctx, d, cfg)
		folds = []*framework.Problem{p}
	}
	if err != nil {
		return nil, nil, "", err
	}
	defer func() {
		for _, p := range folds {
			p.Close()
		}
	}()
	m, err := framework.LookupMeasure(sim.Measure)
	if err != nil {
		return nil, nil, "", err
	}
	red, err := framework.Reduce(ctx, folds, ests, folds[0].Features(), framework.ReduceOptions{Workers: 1})
	if err != nil {
		return nil, nil, "", err
	}
	out := make([][]framework.Result, len(infs))
	for i, inf := range infs {
		if out[i], err = red.Infer(m, framework.InferOptions{Inference: inf, Level: level}); err != nil {
			return nil, nil, "", err
		}
	}
	return out, sim.Truth, sim.Measure, nil
}

func summarise(results [][][]framework.Result, k, i int, inf framework.Inference, truth float64) coverageRow {
	var vis, ses []float64
	var cover, reject int
	first := results[0][i][k]
	for _, rr := range results {
		r := rr[i][k]
		vis = append(vis, r.VI)
		ses = append(ses, r.SE)
		if r.CILow <= truth && truth <= r.CIHigh {
			cover++
		}
		if r.PValue < 0.05 {
			reject++
		}
	}
	reps := float64(len(results))
	mean := stat.Mean(vis, nil)
	return coverageRow{Estimator: first.Estimator, Feature: first.Feature, Inference: inf.String(), Truth: truth,
		MeanVI: mean, Bias: mean - truth, SDVI: stat.StdDev(vis, nil), MeanSE: stat.Mean(ses, nil),
		Coverage: float64(cover) / reps, Reject05: float64(reject) / reps}
}

// writeCoverageTable writes one line per estimator and feature, plain and
// split side by side.
func writeCoverageTable(w *bytes.Buffer, r *coverageReport) {
	cf := ""
	if r.CrossFit > 0 {
		cf = fmt.Sprintf("  crossfit %d", r.CrossFit)
	}
	fmt.Fprintf(w, "coverage  setting %s  n %d  rho %g  reps %d%s  level %g  measure %s  (%.0fs)\n\n",
		r.Setting, r.N, r.Rho, r.Reps, cf, r.Level, r.Measure, r.Seconds)
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "estimator\tfeature\ttruth\t| plain: cover\tbias\tsd(vi)\tmean se\tp<.05\t| split: cover\tbias\tsd(vi)\tmean se\tp<.05\t")
	for k := 0; k+1 < len(r.Rows); k += 2 {
		p, s := r.Rows[k], r.Rows[k+1]
		fmt.Fprintf(tw, "%s\t%s\t%.4f\t| %.2f\t%+.4f\t%.4f\t%.4f\t%.2f\t| %.2f\t%+.4f\t%.4f\t%.4f\t%.2f\t\n",
			p.Estimator, p.Feature, p.Truth, p.Coverage, p.Bias, p.SDVI, p.MeanSE, p.Reject05,
			s.Coverage, s.Bias, s.SDVI, s.MeanSE, s.Reject05)
	}
	tw.Flush()
}
