//go:build ignore

// The in-process half of power_study.go: one fit of each data set, inferred
// under several inference options.
//
//	go run research/scripts/power_study.go research/scripts/power_study_inproc.go \
//	    inproc -out DIR -settings LIST -seeds A-B [-estimators lazy,cpi] [-workers 1] [-variants LIST]
//
// For each setting and seed it runs lazyvi.Run (vi estimate's defaults, the
// same numbers as `vi estimate --data D.csv --target y --seed SEED`) once,
// keeping every reduced model in memory (a pipeline.Checkpoint), then once
// per variant with those reductions: only the full models are trained
// again (the same seeds, the same networks). It writes
// DIR/VARIANT/SETTING/SEED.json (the report) and .truth, for summary.
//
// The variants (each from the default, the rest unchanged):
//
//	default     vi estimate's default
//	nobias      --bias-aware=false
//	twosided    --bias-two-sided
//	nodebias    --debias=false (and so --bias-aware=false)
//	noensemble  --ensemble=false: the repetitions' paired estimates averaged, their spread in se
//	perturbed   --inference perturbed
//	split       --inference split (the ensembled split)
//	cov         --test covariance
//	estimate    --test estimate
//
// A variant VARIANT+logloss is VARIANT with --measure logloss, on the
// binary response only.
package main

import (
	"context"
	"encoding/gob"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lazyvi/lazyvi"
	"github.com/lazyvi/lazyvi/backends/mlp"
	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/pipeline"
)

// memCheckpoint keeps every reduction of a run in memory.
type memCheckpoint struct {
	mu   sync.Mutex
	reds map[string]framework.Reduced
	secs map[string]float64
}

func (c *memCheckpoint) Load(key string) (framework.Reduced, float64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.reds[key]
	return r, c.secs[key], ok
}

func (c *memCheckpoint) Save(key string, r framework.Reduced, secs float64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reds[key], c.secs[key] = r, secs
	return nil
}

// variants set the options of each variant; the default's are left zero, as
// vi estimate leaves them, for lazyvi.Run to fill.
var variants = map[string]func(*pipeline.Config, *pipeline.EstimateOptions){
	"default": func(*pipeline.Config, *pipeline.EstimateOptions) {},
	"nobias": func(c *pipeline.Config, o *pipeline.EstimateOptions) {
		ensembleDefault(c, o)
		o.BiasAware, o.DirectedBias = false, false
	},
	"twosided": func(c *pipeline.Config, o *pipeline.EstimateOptions) {
		ensembleDefault(c, o)
		o.DirectedBias = false
	},
	"nodebias": func(c *pipeline.Config, o *pipeline.EstimateOptions) {
		ensembleDefault(c, o)
		o.Debias, o.BiasAware, o.DirectedBias = false, false, false
	},
	"noensemble": func(c *pipeline.Config, o *pipeline.EstimateOptions) {
		ensembleDefault(c, o)
		o.Ensemble, o.Debias, o.BiasAware, o.DirectedBias = false, false, false, false
	},
	"perturbed": func(c *pipeline.Config, o *pipeline.EstimateOptions) {
		ensembleDefault(c, o)
		o.Inference = inference.Perturbed
	},
	"cov": func(c *pipeline.Config, o *pipeline.EstimateOptions) {
		ensembleDefault(c, o)
		o.Test = inference.TestCovariance
	},
	"estimate": func(c *pipeline.Config, o *pipeline.EstimateOptions) {
		ensembleDefault(c, o)
		o.Test = inference.TestEstimate
	},
	"split": func(c *pipeline.Config, o *pipeline.EstimateOptions) {
		ensembleDefault(c, o)
		o.Inference = inference.Split
		o.Debias, o.BiasAware, o.DirectedBias, o.ScoreUpper = false, false, false, false
	},
}

func init() { inprocFunc = inproc }

func ensembleDefault(c *pipeline.Config, o *pipeline.EstimateOptions) {
	c.CrossFit, c.Repeats = lazyvi.DefaultCrossFit, lazyvi.DefaultRepeats
	o.Ensemble = true
	lazyvi.EnsembleDefault(o)
}

func inproc(args []string) error {
	fs := flag.NewFlagSet("inproc", flag.ExitOnError)
	out := fs.String("out", "", "output directory")
	list := fs.String("settings", "dev", "settings")
	seedSpec := fs.String("seeds", "", "seeds")
	estList := fs.String("estimators", "lazy,cpi", "estimators")
	workers := fs.Int("workers", 1, "workers")
	keep := fs.Bool("keep", false, "keep each data set's reductions in DIR/reductions (gob) and reuse them")
	varList := fs.String("variants", "default,nobias,twosided,nodebias,noensemble,perturbed,split", "variants")
	fs.Parse(args)
	ss, err := parseSettings(*list)
	if err != nil {
		return err
	}
	seeds, err := parseSeeds(*seedSpec)
	if err != nil {
		return err
	}
	var ests []framework.Estimator
	for _, name := range strings.Split(*estList, ",") {
		e, err := framework.LookupEstimator(name)
		if err != nil {
			return err
		}
		ests = append(ests, e)
	}
	vs := strings.Split(*varList, ",")
	for _, v := range vs {
		if variants[strings.TrimSuffix(v, "+logloss")] == nil {
			return fmt.Errorf("unknown variant %q", v)
		}
	}
	for _, seed := range seeds {
		for _, s := range ss {
			start := time.Now()
			if err := inprocOne(*out, s, seed, ests, *workers, vs, *keep); err != nil {
				fmt.Fprintln(os.Stderr, "power_study:", err)
				continue
			}
			if err := logTime(*out, s, seed, time.Since(start).Seconds()); err != nil {
				return err
			}
		}
	}
	return nil
}

func inprocOne(dir string, s setting, seed uint64, ests []framework.Estimator, workers int, vs []string, keep bool) error {
	name := strconv.FormatUint(seed, 10)
	todo := vs[:0:0]
	for _, v := range vs {
		if _, err := os.Stat(filepath.Join(dir, v, s.String(), name+".json")); err != nil {
			todo = append(todo, v)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	d := generate(s, seed)
	tmp, err := os.CreateTemp("", "power-*.csv")
	if err != nil {
		return err
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	if err := writeCSV(tmp.Name(), d); err != nil {
		return err
	}
	ctx := context.Background()
	data, err := dataio.LoadCSV(ctx, tmp.Name())
	if err != nil {
		return err
	}
	ck := &memCheckpoint{reds: map[string]framework.Reduced{}, secs: map[string]float64{}}
	kept := filepath.Join(dir, "reductions", s.String(), name+".gob")
	if keep {
		if f, err := os.Open(kept); err == nil {
			err = gob.NewDecoder(f).Decode(&ck.reds)
			f.Close()
			if err != nil {
				return fmt.Errorf("%s: %w", kept, err)
			}
		}
	}
	n0 := len(ck.reds)
	for _, v := range todo {
		cfg := pipeline.Config{Target: "y", Seed: int64(seed)}
		opt := pipeline.EstimateOptions{Workers: workers, Checkpoint: ck}
		vname, ll := strings.CutSuffix(v, "+logloss")
		var m framework.Measure
		if ll {
			if s.response != "binary" {
				continue
			}
			if m, err = framework.LookupMeasure("logloss"); err != nil {
				return err
			}
		}
		var rep *pipeline.Report
		if vname == "default" {
			rep, err = lazyvi.Run(ctx, data, lazyvi.Options{Config: cfg, Measure: m, Estimators: ests, Estimate: opt})
		} else {
			// As vi estimate with the variant's flags: pipeline.Run on the
			// library's full-model defaults (lazyvi.Run would take an
			// ensemble's split inference for an unchosen one).
			variants[vname](&cfg, &opt)
			cfg.Backend, cfg.BackendName = mlp.Backend{}, lazyvi.DefaultBackend
			lazyvi.FullModelDefaults(&cfg, cfg.BackendName, true)
			rep, err = pipeline.Run(ctx, data, cfg, m, ests, opt)
		}
		if err != nil {
			return fmt.Errorf("%s seed %d variant %s: %w", s, seed, v, err)
		}
		if err := writeInprocReport(filepath.Join(dir, v, s.String()), name, rep, supportNames(d)); err != nil {
			return err
		}
	}
	if keep && len(ck.reds) > n0 {
		if err := os.MkdirAll(filepath.Dir(kept), 0o755); err != nil {
			return err
		}
		f, err := os.Create(kept + ".tmp")
		if err != nil {
			return err
		}
		if err := gob.NewEncoder(f).Encode(ck.reds); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		return os.Rename(kept+".tmp", kept)
	}
	return nil
}

// logTime appends a data set's wall seconds (its fit and every variant) to
// DIR/times.tsv.
func logTime(dir string, s setting, seed uint64, secs float64) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(dir, "times.tsv"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = fmt.Fprintf(f, "%s\t%d\t%.1f\n", s, seed, secs)
	return err
}

// writeInprocReport writes a variant's report as sdir/name.json (through a
// temporary file, so that a stopped run leaves no partial report) and its
// support's names as sdir/name.truth.
func writeInprocReport(sdir, name string, rep *pipeline.Report, support string) error {
	if err := os.MkdirAll(sdir, 0o755); err != nil {
		return err
	}
	raw, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	base := filepath.Join(sdir, name)
	if err := os.WriteFile(base+".truth", []byte(support+"\n"), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(base+".json.tmp", raw, 0o644); err != nil {
		return err
	}
	return os.Rename(base+".json.tmp", base+".json")
}
