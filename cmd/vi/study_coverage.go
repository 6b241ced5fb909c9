package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/lazyvi/lazyvi"
	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/internal/progress"
	"github.com/lazyvi/lazyvi/pipeline"
	"github.com/lazyvi/lazyvi/simulate"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// coverageBench is the study case of vi bench: it repeats a setting with a
// known truth (simulated, or real data with planted columns) and reports,
// per inference candidate, estimator and feature, how often the intervals
// cover the truth, how far the estimates sit from it and how often p <
// 0.05: the study of the inference options in docs/inference.md. Every
// candidate is computed from the same fitted models of a repetition.
var coverageBench = &benchCase{
	Name:  "coverage",
	Short: "coverage, size and power of the inference candidates over repetitions of a setting with a known truth",
	Setup: coverageCase,
}

// coverageReport is the --format json contract of vi bench coverage.
type coverageReport struct {
	Setting    string        `json:"setting"`
	Data       string        `json:"data,omitempty"`   // semi: the data set
	Signal     float64       `json:"signal,omitempty"` // semi: Var share of b z
	Copy       float64       `json:"copy,omitempty"`   // semi: Corr(copy_<c>, c), 0: no copy
	N          int           `json:"n"`
	Rho        float64       `json:"rho"`
	Reps       int           `json:"reps"`
	CrossFit   int           `json:"crossfit"`
	Repeats    int           `json:"repeats"`
	Level      float64       `json:"level"`
	Measure    string        `json:"measure"`
	Hidden     string        `json:"hidden,omitempty"`
	Seconds    float64       `json:"seconds"`
	Candidates []string      `json:"candidates"`
	Rows       []coverageRow `json:"rows"`
}

// coverageRow is one candidate, estimator and feature over the reps. Truth,
// Bias and Coverage are null for a feature whose truth is unknown (the real
// features of the semi-synthetic setting).
type coverageRow struct {
	Candidate string   `json:"candidate"`
	Estimator string   `json:"estimator"`
	Feature   string   `json:"feature"`
	Truth     *float64 `json:"truth"`
	MeanVI    float64  `json:"mean_vi"`
	Bias      *float64 `json:"bias"`     // mean VI - truth
	SDVI      float64  `json:"sd_vi"`    // empirical sd of the estimates
	MeanSE    float64  `json:"mean_se"`  // mean reported standard error
	Coverage  *float64 `json:"coverage"` // share of intervals containing the truth
	// Reject05 is the share of p-values below 0.05 (H0: VI <= 0): the
	// type I error for a null feature, the power otherwise.
	Reject05 float64 `json:"reject_05"`
	// Incoherent is the share of results whose interval does not contain
	// their estimate, or lies above 0 where p >= (1 - level)/2 or not
	// where p < (1 - level)/2.
	Incoherent float64 `json:"incoherent"`
}

// candidate is one inference scheme of the study: which fits it reads
// (the single split, the first cross-fit, or all repetitions of it) and
// how it infers from them.
type candidate struct {
	Name   string
	Scheme scheme
	Opt    inference.InferOptions
}

type scheme int

const (
	singleSplit    scheme = iota // one train/evaluation split (--train-frac 2/3)
	crossFit                     // K folds, the first fold assignment
	repeated                     // K folds, every repetition combined
	repeatedWithin               // repeated, the spread of the repetitions' estimates left out of se
	ensembled                    // K folds, every repetition's predictions averaged per row
)

// candidates lists the study's inference candidates for rho values rhos;
// without repetitions (repeats 1) the repeated ones are left out.
func candidates(rhos []float64, repeats int) []candidate {
	inf := func(i inference.Inference, rho float64) inference.InferOptions {
		return inference.InferOptions{Inference: i, Perturb: rho}
	}
	cs := []candidate{
		{"split", singleSplit, inf(inference.Split, 0)},
		{"plain", singleSplit, inf(inference.Plain, 0)},
		{"cv-split", crossFit, inf(inference.Split, 0)},
		{"cv-plain", crossFit, inf(inference.Plain, 0)},
	}
	for _, r := range rhos {
		cs = append(cs, candidate{"cv-perturbed" + rhoSuffix(r, rhos), crossFit, inf(inference.Perturbed, r)})
	}
	if repeats < 2 {
		return cs
	}
	var def pipeline.EstimateOptions
	lazyvi.EnsembleDefault(&def)
	cs = append(cs,
		// vi estimate's default.
		candidate{"default", ensembled, inference.InferOptions{Inference: def.Inference, Debias: def.Debias, BiasAware: def.BiasAware, DirectedBias: def.DirectedBias, ScoreUpper: def.ScoreUpper, Test: def.Test, Perturb: rhos[0]}},
		// The default with every p-value from the estimate's own test
		// (the covariance test's applies to cpi).
		candidate{"default-estimate", ensembled, inference.InferOptions{Inference: def.Inference, Debias: def.Debias, BiasAware: def.BiasAware, DirectedBias: def.DirectedBias, ScoreUpper: def.ScoreUpper, Test: inference.TestEstimate, Perturb: rhos[0]}},
		candidate{"rep-split", repeated, inf(inference.Split, 0)},
		candidate{"rep-plain", repeated, inf(inference.Plain, 0)},
		candidate{"ens-split", ensembled, inf(inference.Split, 0)},
		candidate{"ens-plain", ensembled, inf(inference.Plain, 0)})
	for _, r := range rhos {
		cs = append(cs, candidate{"ens-perturbed" + rhoSuffix(r, rhos), ensembled, inf(inference.Perturbed, r)})
	}
	debiased := inf(inference.Plain, 0)
	debiased.Debias = true
	aware := inf(inference.Plain, 0)
	aware.BiasAware = true
	both := debiased
	both.BiasAware = true
	score := debiased
	score.ScoreUpper = true
	bothScore := both
	bothScore.ScoreUpper = true
	directed := bothScore
	directed.DirectedBias = true
	cs = append(cs,
		candidate{"ens-debiased", ensembled, debiased},
		candidate{"ens-debiased-score", ensembled, score},
		candidate{"ens-plain-aware", ensembled, aware},
		candidate{"ens-debiased-aware", ensembled, both},
		candidate{"ens-debiased-aware-score", ensembled, bothScore},
		candidate{"ens-debiased-directed-score", ensembled, directed})
	for _, r := range rhos {
		o := inf(inference.Perturbed, r)
		o.Debias = true
		cs = append(cs, candidate{"ens-debiased-perturbed" + rhoSuffix(r, rhos), ensembled, o})
	}
	for _, r := range rhos {
		cs = append(cs, candidate{"rep-perturbed" + rhoSuffix(r, rhos), repeated, inf(inference.Perturbed, r)})
	}
	for _, r := range rhos {
		cs = append(cs, candidate{"rep-perturbed" + rhoSuffix(r, rhos) + "-notrain", repeatedWithin, inf(inference.Perturbed, r)})
	}
	return cs
}

// rhoSuffix names rho in a candidate when the study has several.
func rhoSuffix(r float64, rhos []float64) string {
	if len(rhos) == 1 {
		return ""
	}
	return "-" + strconv.FormatFloat(r, 'g', -1, 64)
}

// coverageSetting is what one repetition draws: a data set and the truth
// per feature (NaN where unknown), under the measure named.
type coverageSetting func(seed int64) (*dataio.Dataset, []float64, string, error)

func coverageCase(fs *flag.FlagSet) func(context.Context, *app) error {
	setting := fs.String("setting", "linear", "`setting`: linear or binary (simulated), or semi (--data with a planted null and signal)")
	data := fs.String("data", "", "semi: the CSV `file` (default: the built-in diabetes data)")
	target := fs.String("target", "", "semi: the response `column` (default: the last)")
	signal := fs.Float64("signal", 0.05, "semi: the planted signal's VI b^2 as a `share` of Var(y)")
	copyCorr := fs.Float64("copy", 0, "semi: also plant a null correlated with the data: a noisy copy of the feature most correlated with the response, with this `correlation` to it (0: none)")
	reps := fs.Int("reps", 100, "number of repetitions (data sets)")
	n := fs.Int("n", 0, "rows per data set (0: 2000 for linear, 1000 for binary, as the paper's experiments)")
	rho := fs.Float64("rho", math.NaN(), "Corr(x1, x2) of the linear setting (default 0.5)")
	estList := fs.String("estimators", "lazy", "comma-separated estimators")
	// The cross-fitted and repeated candidates' folds and repetitions are
	// by default those of vi estimate's default inference.
	crossfit := fs.Int("crossfit", lazyvi.DefaultCrossFit, "cross-fitting `folds` of the cross-fitted candidates (at least 2)")
	repeats := fs.Int("repeats", lazyvi.DefaultRepeats, "repetitions of the cross-fit for the repeated candidates (1: none)")
	perturb := fs.String("perturb", strconv.FormatFloat(inference.DefaultPerturb, 'g', -1, 64), "comma-separated `rhos` of the perturbed candidates")
	lazyFolds := fs.Int("folds", 0, "cross-validation folds for lazy's ridge penalty (0: the framework's default)")
	hidden := fs.String("hidden", "", "hidden widths of the MLP (backend default when empty)")
	level := fs.Float64("level", inference.DefaultLevel, "level of the intervals")
	workers := fs.Int("workers", runtime.NumCPU(), "repetitions run concurrently")
	seed := fs.Int64("seed", 1, "seed of the first repetition; repetition r uses seed+r")
	format := fs.String("format", "table", "output format: table or json")
	out := fs.String("out", "", "write the output to `FILE` (atomically) instead of stdout")
	return func(ctx context.Context, a *app) error {
		if *format != "table" && *format != "json" {
			return framework.Usagef("bench coverage: unknown --format %q (want table or json)", *format)
		}
		if *out != "" {
			if err := checkOutDir(*out); err != nil {
				return err
			}
		}
		if *reps < 1 || *workers < 1 || *crossfit < 2 || *repeats < 1 {
			return framework.Usagef("bench coverage: --reps, --workers and --repeats must be positive and --crossfit at least 2")
		}
		if !(*level > 0 && *level < 1) {
			return framework.Usagef("--level must be in (0, 1), got %g", *level)
		}
		rhos, err := floatList(*perturb, "--perturb")
		if err != nil {
			return err
		}
		draw, rep, err := coverageDraw(ctx, drawFlags{setting: *setting, data: *data, target: *target, signal: *signal, copyCorr: *copyCorr, n: n, rho: rho})
		if err != nil {
			return err
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
		cands := candidates(rhos, *repeats)
		for i := range cands {
			cands[i].Opt.Level = *level
		}
		prog := progress.New(a.stderr, progress.Auto, "bench coverage")
		defer prog.Close()
		start := time.Now()

		// results[r][c] are repetition r's results under candidate c.
		results := make([][][]inference.Result, *reps)
		truths := make([][]float64, *reps)
		var measure string
		var mu sync.Mutex
		var firstErr error
		done := 0
		jobs := make(chan int)
		var wg sync.WaitGroup
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		fit := coverageFit{be: be, opts: opts, crossfit: *crossfit, repeats: *repeats, ests: ests, cands: cands}
		for w := 0; w < *workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for r := range jobs {
					res, tr, ms, err := fit.rep(ctx, draw, *seed+int64(r))
					mu.Lock()
					if err != nil {
						if firstErr == nil {
							firstErr = fmt.Errorf("repetition %d: %w", r+1, err)
							cancel()
						}
					} else {
						results[r], truths[r], measure = res, tr, ms
						done++
						prog.Update(done, *reps)
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
		prog.Clear()
		if firstErr != nil {
			return firstErr
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rep.Reps, rep.CrossFit, rep.Repeats, rep.Level = *reps, *crossfit, *repeats, *level
		rep.Measure, rep.Hidden, rep.Seconds = measure, *hidden, time.Since(start).Seconds()
		for _, c := range cands {
			rep.Candidates = append(rep.Candidates, c.Name)
		}
		nf := len(truths[0])
		for c, cand := range cands {
			for e := range ests {
				for f := 0; f < nf; f++ {
					rep.Rows = append(rep.Rows, summarise(results, truths, e*nf+f, c, f, cand.Name, *level))
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

// drawFlags are the flags of vi bench coverage that say what a repetition
// draws: the setting, semi's data, target, signal and copy, and the
// simulated settings' n and rho, which coverageDraw sets to what it uses.
type drawFlags struct {
	setting, data, target string
	signal, copyCorr      float64
	n                     *int
	rho                   *float64
}

// coverageDraw checks the setting's flags and returns what a repetition
// draws and the report's header.
func coverageDraw(ctx context.Context, f drawFlags) (coverageSetting, coverageReport, error) {
	setting, data, target, signal, copyCorr, n, rho := f.setting, f.data, f.target, f.signal, f.copyCorr, f.n, f.rho
	switch setting {
	case "linear", "binary":
		if data != "" || target != "" || copyCorr != 0 {
			return nil, coverageReport{}, framework.Usagef("bench coverage: --data, --target and --copy are for --setting semi")
		}
		if math.IsNaN(*rho) {
			*rho = defaultRho(setting)
		}
		if *n == 0 {
			*n = 2000
			if setting == "binary" {
				*n = 1000
			}
		}
		if _, err := simulate.Generate(setting, 2, *rho, 0); err != nil {
			return nil, coverageReport{}, err
		}
		draw := func(seed int64) (*dataio.Dataset, []float64, string, error) {
			sim, err := simulate.Generate(setting, *n, *rho, seed)
			if err != nil {
				return nil, nil, "", err
			}
			return &dataio.Dataset{Source: sim.Setting, Names: sim.Names, X: sim.X}, sim.Truth, sim.Measure, nil
		}
		return draw, coverageReport{Setting: setting, N: *n, Rho: *rho}, nil
	case "semi":
		if *n != 0 || !math.IsNaN(*rho) {
			return nil, coverageReport{}, framework.Usagef("bench coverage: --n and --rho are for the simulated settings; semi uses every row of --data")
		}
		d, err := loadOrBuiltin(ctx, data)
		if err != nil {
			return nil, coverageReport{}, err
		}
		s, err := newSemiSynthetic(d, target, signal, copyCorr)
		if err != nil {
			return nil, coverageReport{}, err
		}
		*n, _ = d.X.Dims()
		*rho = 0
		draw := func(seed int64) (*dataio.Dataset, []float64, string, error) {
			d, truth := s.draw(seed)
			return d, truth, "mse", nil
		}
		return draw, coverageReport{Setting: setting, Data: d.Source, Signal: signal, Copy: copyCorr, N: *n}, nil
	}
	return nil, coverageReport{}, framework.Usagef("bench coverage: --setting must be linear, binary or semi (a setting with a known truth), got %q", setting)
}

// loadOrBuiltin reads path, or the built-in diabetes data when it is "".
func loadOrBuiltin(ctx context.Context, path string) (*dataio.Dataset, error) {
	if path == "" {
		return lazyvi.Diabetes()
	}
	d, err := dataio.LoadCSV(ctx, path)
	if err != nil {
		return nil, runError(ctx, err)
	}
	return d, nil
}

// coverageFit fits one repetition's models and infers every candidate.
type coverageFit struct {
	be       framework.Backend
	opts     map[string]string
	crossfit int
	repeats  int
	ests     []framework.Estimator
	cands    []candidate
}

// rep draws the repetition's data, fits the single split and the repeats
// cross-fits (seeded as vi estimate --seed seed would) and infers under
// each candidate.
func (c coverageFit) rep(ctx context.Context, draw coverageSetting, seed int64) ([][]inference.Result, []float64, string, error) {
	d, truth, measure, err := draw(seed)
	if err != nil {
		return nil, nil, "", err
	}
	m, err := framework.LookupMeasure(measure)
	if err != nil {
		return nil, nil, "", err
	}
	var task *framework.Task
	if measure == "mse" {
		t := framework.Regression
		task = &t
	}
	reduce := func(cfg pipeline.Config) (*inference.Reductions, error) {
		var folds []*framework.Problem
		var err error
		if cfg.CrossFit >= 2 {
			folds, err = pipeline.PrepareFolds(ctx, d, cfg, cfg.CrossFit, 1)
		} else {
			var p *framework.Problem
			p, err = pipeline.Prepare(ctx, d, cfg)
			folds = []*framework.Problem{p}
		}
		if err != nil {
			return nil, err
		}
		defer func() {
			for _, p := range folds {
				p.Close()
			}
		}()
		return pipeline.Reduce(ctx, folds, c.ests, folds[0].Features(), pipeline.ReduceOptions{Workers: 1, EstimatorBaselines: true})
	}
	cfg := pipeline.Config{Backend: c.be, BackendName: "mlp", Options: c.opts, Seed: seed, Task: task,
		MinTrain: pipeline.MinTrainFor(c.ests)}
	single, err := reduce(cfg)
	if err != nil {
		return nil, nil, "", err
	}
	reps := make([]*inference.Reductions, c.repeats)
	for k := range reps {
		cf := cfg
		cf.CrossFit, cf.Seed = c.crossfit, inference.RepeatSeed(seed, k)
		if reps[k], err = reduce(cf); err != nil {
			return nil, nil, "", fmt.Errorf("cross-fit %d: %w", k+1, err)
		}
	}
	out := make([][]inference.Result, len(c.cands))
	for i, cand := range c.cands {
		o := cand.Opt
		o.Seed = seed
		switch cand.Scheme {
		case singleSplit:
			out[i], err = single.Infer(m, o)
		case crossFit:
			out[i], err = reps[0].Infer(m, o)
		case repeated:
			out[i], err = inference.InferRepeated(reps, m, o)
		case repeatedWithin:
			out[i], err = inferWithin(reps, m, o)
		case ensembled:
			o.Ensemble = true
			out[i], err = inference.InferRepeated(reps, m, o)
		}
		if err != nil {
			return nil, nil, "", fmt.Errorf("%s: %w", cand.Name, err)
		}
	}
	return out, truth, measure, nil
}

// inferWithin combines the repetitions as InferRepeated does, but with
// only the repetitions' own variance in the standard error: VI = mean_m
// VI_m and se^2 = mean_m se_m^2, without InferRepeated's var_m(VI_m)/M,
// the variability of the training that the study shows the need of.
func inferWithin(reps []*inference.Reductions, m framework.Measure, o inference.InferOptions) ([]inference.Result, error) {
	per := make([][]inference.Result, len(reps))
	for i, r := range reps {
		res, err := r.Infer(m, o)
		if err != nil {
			return nil, fmt.Errorf("repetition %d: %w", i+1, err)
		}
		per[i] = res
	}
	level := o.Level
	if level == 0 {
		level = inference.DefaultLevel
	}
	z := distuv.UnitNormal.Quantile(0.5 + level/2)
	M := float64(len(per))
	out := make([]inference.Result, len(per[0]))
	for k := range out {
		var vi, v2 float64
		for _, res := range per {
			vi += res[k].VI
			v2 += res[k].SE * res[k].SE
		}
		vi, v2 = vi/M, v2/M
		se := math.Sqrt(v2)
		out[k] = inference.Result{Feature: per[0][k].Feature, Estimator: per[0][k].Estimator, VI: vi, SE: se,
			CILow: vi - z*se, CIHigh: vi + z*se, PValue: inference.OneSidedPValue(vi, se, o.Delta)}
	}
	return out, nil
}

// summarise is result k (estimator e, feature f) of candidate c over the
// repetitions, with feature f's truth in each.
func summarise(results [][][]inference.Result, truths [][]float64, k, c, f int, name string, level float64) coverageRow {
	var vis, ses []float64
	var cover, reject, incoherent int
	first := results[0][c][k]
	known := !math.IsNaN(truths[0][f])
	var truthSum float64
	for r, rr := range results {
		res := rr[c][k]
		vis = append(vis, res.VI)
		ses = append(ses, res.SE)
		truth := truths[r][f]
		truthSum += truth
		if known && res.CILow <= truth && truth <= res.CIHigh {
			cover++
		}
		if res.PValue < 0.05 {
			reject++
		}
		if !coherent(res, level) {
			incoherent++
		}
	}
	reps := float64(len(results))
	mean := stat.Mean(vis, nil)
	sd := 0.0 // one repetition has no spread
	if len(vis) > 1 {
		sd = stat.StdDev(vis, nil)
	}
	row := coverageRow{Candidate: name, Estimator: first.Estimator, Feature: first.Feature,
		MeanVI: mean, SDVI: sd, MeanSE: stat.Mean(ses, nil), Reject05: float64(reject) / reps,
		Incoherent: float64(incoherent) / reps}
	if known {
		truth := truthSum / reps
		bias, cov := mean-truth, float64(cover)/reps
		row.Truth, row.Bias, row.Coverage = &truth, &bias, &cov
	}
	return row
}

// writeCoverageTable writes the summary (per candidate and estimator: the
// coverage range over the features of known truth, the largest null
// rejection rate, the power per signal feature) and then every row.
func writeCoverageTable(w *bytes.Buffer, r *coverageReport) {
	head := fmt.Sprintf("setting %s", r.Setting)
	if r.Data != "" {
		head += fmt.Sprintf("  data %s  signal %g", r.Data, r.Signal)
		if r.Copy > 0 {
			head += fmt.Sprintf("  copy %g", r.Copy)
		}
	} else {
		head += fmt.Sprintf("  rho %g", r.Rho)
	}
	fmt.Fprintf(w, "coverage  %s  n %d  reps %d  crossfit %d  repeats %d  level %g  measure %s  (%.0fs)\n\n",
		head, r.N, r.Reps, r.CrossFit, r.Repeats, r.Level, r.Measure, r.Seconds)

	type key struct{ cand, est string }
	var order []key
	byKey := map[key][]coverageRow{}
	for _, row := range r.Rows {
		k := key{row.Candidate, row.Estimator}
		if _, ok := byKey[k]; !ok {
			order = append(order, k)
		}
		byKey[k] = append(byKey[k], row)
	}
	var signals []string
	for _, row := range byKey[order[0]] {
		if row.Truth != nil && *row.Truth > 0 {
			signals = append(signals, row.Feature)
		}
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "candidate\testimator\tincoherent\tcover min\tcover max\tnull p<.05 max\t| power:\t%s\t\n", strings.Join(signals, "\t"))
	for _, k := range order {
		lo, hi, nullMax, incoherent := math.Inf(1), math.Inf(-1), 0.0, 0.0
		var power []string
		for _, row := range byKey[k] {
			incoherent = math.Max(incoherent, row.Incoherent)
			if row.Coverage == nil {
				continue
			}
			lo, hi = math.Min(lo, *row.Coverage), math.Max(hi, *row.Coverage)
			if *row.Truth == 0 {
				nullMax = math.Max(nullMax, row.Reject05)
			} else {
				power = append(power, fmt.Sprintf("%.2f", row.Reject05))
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%.2f\t%.2f\t%.2f\t%.2f\t|\t%s\t\n", k.cand, k.est, incoherent, lo, hi, nullMax, strings.Join(power, "\t"))
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "candidate\testimator\tfeature\ttruth\tcover\tbias\tsd(vi)\tmean se\tp<.05\t")
	opt := func(p *float64, f string) string {
		if p == nil {
			return "-"
		}
		return fmt.Sprintf(f, *p)
	}
	for _, row := range r.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%.4g\t%.4g\t%.2f\t\n", row.Candidate, row.Estimator, row.Feature,
			opt(row.Truth, "%.4g"), opt(row.Coverage, "%.2f"), opt(row.Bias, "%+.4g"), row.SDVI, row.MeanSE, row.Reject05)
	}
	tw.Flush()
}

// floatList parses a comma-separated list of positive numbers.
func floatList(s, flagName string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			return nil, framework.Usagef("%s: want positive numbers, got %q", flagName, f)
		}
		out = append(out, v)
	}
	return out, nil
}

// coherent reports whether a result's interval contains its estimate and
// lies above 0 exactly when its one-sided p-value (of H0: VI <= 0) is
// below (1 - level)/2.
func coherent(r inference.Result, level float64) bool {
	return r.CILow <= r.VI && r.VI <= r.CIHigh && (r.CILow > 0) == (r.PValue < (1-level)/2)
}
