package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/internal/progress"
)

// vi bench data times every estimator on the user's own data (or a seeded
// subsample of its rows) and reports each one's agreement with retrain
// beside its cost, so that a user can check on a slice that an estimator is
// close enough before running it on everything.
var dataBench = &benchCase{Name: "data", Short: "every estimator on your data (--data FILE --target COL): cost and agreement with retrain", Setup: dataCase}

// dataRunReport is vi bench data's --format json contract: the timing run
// and each estimator's agreement with retrain.
type dataRunReport struct {
	speedRun
	Source    string      `json:"source"`
	Target    string      `json:"target"`
	Agreement []agreement `json:"agreement"`
}

// agreement compares an estimator's VIs with retrain's over the timed
// features: the mean absolute difference, Spearman's rank correlation and
// the overlap of the top TopK features (shared / TopK).
type agreement struct {
	Estimator   string  `json:"estimator"`
	MeanAbsDiff float64 `json:"mean_abs_diff"`
	RankCorr    float64 `json:"rank_corr"`
	TopK        int     `json:"top_k"`
	TopOverlap  float64 `json:"top_overlap"`
}

// dataSubsampleSeedPerturb is the second word of --rows's PCG seed.
const dataSubsampleSeedPerturb = 0x0da7a5e1

func dataCase(fs *flag.FlagSet) func(context.Context, *app) error {
	dataPath := fs.String("data", "", "CSV `file` with a header row (required)")
	target := fs.String("target", "", "response `column` (default: the last column)")
	evalData := fs.String("eval-data", "", dataUsage["eval-data"])
	splitColumn := fs.String("split-column", "", dataUsage["split-column"])
	nFeatures := fs.Int("features", 0, "time the first `K` features only (0: all)")
	rows := fs.Int("rows", 0, "use a seeded subsample of `N` rows (0: all)")
	backend := fs.String("backend", "mlp", "built-in backend of the model (mlp, cnn, linear, forest)")
	plugin := fs.String("plugin", "", "backend plugin `executable` (a PyTorch model: the lazyvi-torch command of plugins/torch), instead of --backend")
	process := fs.Bool("backend-process", false, dataUsage["backend-process"])
	hidden := fs.String("hidden", "50", "hidden widths of the MLP, comma-separated (the cnn's dense width when given)")
	image := fs.String("image", "", "the features are the pixels of an `HxW` image, row-major (backend cnn)")
	epochs := fs.Int("epochs", 0, "the model's maximum training `epochs` (0: the backend's default)")
	estList := fs.String("estimators", "lazy,dropout,retrain", "comma-separated estimators to time (retrain is the reference)")
	workers := fs.Int("workers", runtime.NumCPU(), "features estimated concurrently")
	lazyMem := fs.Int("lazy-mem", 0, "lazy's memory bound per worker in `MiB` (0: its default, 1024)")
	lazyPrecision := fs.String("lazy-precision", "single", "`precision` of lazy's work at scale (the matrix-free solves' Jacobian products, the penalty search's kernels): single (where the backend has it, faster) or double")
	seed := fs.Int64("seed", 1, "seed of the subsample, split and models")
	format := fs.String("format", "table", "output format: table or json")
	out := fs.String("out", "", "write the output to `FILE` (atomically) instead of stdout")
	return func(ctx context.Context, a *app) error {
		switch {
		case *dataPath == "":
			return framework.Usagef("bench data: --data FILE is required")
		case *format != "table" && *format != "json":
			return framework.Usagef("bench data: unknown --format %q (want table or json)", *format)
		case *nFeatures < 0 || *rows < 0 || *epochs < 0 || *lazyMem < 0:
			return framework.Usagef("bench data: --features, --rows, --epochs and --lazy-mem must be at least 0")
		case *workers < 1:
			return framework.Usagef("--workers must be at least 1, got %d", *workers)
		}
		if *out != "" {
			if err := checkOutDir(*out); err != nil {
				return err
			}
		}
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		spec, err := newBackendSpec(*backend, set["backend"], *plugin)
		if err != nil {
			return err
		}
		spec.process = *process
		ests, err := lookupEstimators(*estList)
		if err != nil {
			return err
		}
		if !slices.ContainsFunc(ests, func(e framework.Estimator) bool { return e.Name() == "retrain" }) {
			return framework.Usagef("bench data: --estimators must include retrain, the reference")
		}
		settings := map[string]string{"lazy-precision": *lazyPrecision}
		if *lazyMem > 0 {
			settings["lazy-mem"] = strconv.Itoa(*lazyMem)
		}
		if ests, err = configure(ests, settings); err != nil {
			return err
		}
		ef := dataFlags{data: *dataPath, evalData: *evalData, splitColumn: *splitColumn, target: *target}
		if err := ef.checkEval(); err != nil {
			return err
		}
		d, part, err := loadEvalData(ctx, *dataPath, *evalData, *splitColumn, dataio.PrepareOptions{Target: *target})
		if err != nil {
			return err
		}
		if foldsOf(part) >= 2 {
			return framework.Usagef("--split-column %s has fold numbers; vi bench data uses one train/evaluation split: mark the rows train or eval", *splitColumn)
		}
		if _, err := d.Column(*target); *target != "" && err != nil {
			return err
		}
		d, part = subsampleRows(d, part, *rows, *seed)
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
			opts["hidden"] = *hidden
		}
		if *image != "" {
			opts["image"] = *image
		}
		if *epochs > 0 {
			opts["epochs"] = strconv.Itoa(*epochs)
		}
		name := spec.name
		if name == "mlp" && spec.plugin == "" {
			name = "" // the report's default
		}
		prog.SetStatus("bench data: training the full model")
		run, vis, err := timeEstimators(ctx, benchInput{data: d, partition: part, target: *target, backend: name}, benchRun{be: be, opts: opts, ests: ests, workers: *workers, nFeatures: *nFeatures, seed: *seed, prog: prog})
		if err != nil {
			return err
		}
		prog.Clear()
		run.Case = "data"
		rep := dataRunReport{speedRun: run, Source: d.Source, Target: *target}
		if rep.Target == "" {
			rep.Target = d.Names[len(d.Names)-1]
		}
		for _, e := range ests {
			if e.Name() != "retrain" {
				rep.Agreement = append(rep.Agreement, agree(e.Name(), vis[e.Name()], vis["retrain"]))
			}
		}
		var buf bytes.Buffer
		if *format == "json" {
			if err := writeJSON(&buf, rep); err != nil {
				return err
			}
		} else {
			writeDataTable(&buf, rep)
		}
		return a.emit(*out, &buf)
	}
}

// subsampleRows returns n rows of d drawn without replacement by a seeded
// permutation, in their order in the file, with their labels of the
// partition part (nil: none); d and part themselves when n is 0 or not
// below its rows.
func subsampleRows(d *dataio.Dataset, part []int, n int, seed int64) (*dataio.Dataset, []int) {
	r, c := d.X.Dims()
	if n == 0 || n >= r {
		return d, part
	}
	pick := rand.New(rand.NewPCG(uint64(seed), dataSubsampleSeedPerturb)).Perm(r)[:n]
	slices.Sort(pick)
	x := mat.NewDense(n, c, nil)
	var sub []int
	for i, row := range pick {
		x.SetRow(i, d.X.RawRowView(row))
		if part != nil {
			sub = append(sub, part[row])
		}
	}
	out := *d
	out.X = x
	return &out, sub
}

// agree compares vi with the reference ref (same features, same order).
func agree(name string, vi, ref []float64) agreement {
	a := agreement{Estimator: name, MeanAbsDiff: *meanAbsDiff(vi, ref)}
	a.RankCorr = stat.Correlation(ranks(vi), ranks(ref), nil)
	a.TopK = max(1, min(5, len(ref)/2))
	top := func(v []float64) []int {
		idx := make([]int, len(v))
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(i, j int) int {
			switch {
			case v[i] > v[j]:
				return -1
			case v[i] < v[j]:
				return 1
			}
			return 0
		})
		return idx[:a.TopK]
	}
	tv, tr := top(vi), top(ref)
	shared := 0
	for _, i := range tv {
		if slices.Contains(tr, i) {
			shared++
		}
	}
	a.TopOverlap = float64(shared) / float64(a.TopK)
	return a
}

// ranks returns the ranks of v (1 = smallest), ties sharing their mean rank.
func ranks(v []float64) []float64 {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(i, j int) int {
		switch {
		case v[i] < v[j]:
			return -1
		case v[i] > v[j]:
			return 1
		}
		return 0
	})
	r := make([]float64, len(v))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && v[idx[j+1]] == v[idx[i]] {
			j++
		}
		for k := i; k <= j; k++ {
			r[idx[k]] = float64(i+j)/2 + 1
		}
		i = j + 1
	}
	return r
}

func writeDataTable(w *bytes.Buffer, rep dataRunReport) {
	writeSpeedTable(w, []speedRun{rep.speedRun})
	fmt.Fprintf(w, "\nagreement with retrain (%s, response %s, %d features)\n\n", rep.Source, rep.Target, rep.Results[0].Features)
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "estimator\tmean |diff|\trank corr\ttop-k overlap\t")
	for _, a := range rep.Agreement {
		fmt.Fprintf(tw, "%s\t%.4g\t%.3f\t%s\t\n", a.Estimator, a.MeanAbsDiff, a.RankCorr, strings.TrimSpace(fmt.Sprintf("%.0f/%d", a.TopOverlap*float64(a.TopK), a.TopK)))
	}
	tw.Flush()
}
