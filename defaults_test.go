package lazyvi_test

import (
	"context"
	"math"
	"reflect"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
	"gonum.org/v1/gonum/stat"

	"github.com/lazyvi/lazyvi"
	"github.com/lazyvi/lazyvi/backends/linear"
	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/pipeline"
	"github.com/lazyvi/lazyvi/simulate"
)

// TestRunFullIsEnsemble: with the default ensemble the full model's
// score is the ensemble's (the predictions the VIs are computed from):
// its mse is at most the single models' mean (the average of
// predictions has at most the average squared error, and the folds of
// 442 rows are near equal), its R² is 1 - mse / Var(y) on the same rows,
// and every baseline's gain is the full model's score minus the
// baseline's, as the header prints them.
func TestRunFullIsEnsemble(t *testing.T) {
	d, err := lazyvi.Diabetes()
	if err != nil {
		t.Fatal(err)
	}
	rep, err := lazyvi.Run(context.Background(), d, lazyvi.Options{Config: pipeline.Config{Seed: 1}})
	if err != nil {
		t.Fatal(err)
	}
	f := rep.Full
	if !rep.Ensemble || f.SingleScore == nil || f.Loss == nil || f.SingleLoss == nil {
		t.Fatalf("ensemble %v, single score %v, loss %v", rep.Ensemble, f.SingleScore, f.Loss)
	}
	if *f.Loss > *f.SingleLoss*(1+1e-3) || *f.Loss == *f.SingleLoss {
		t.Errorf("the ensemble's mse %g, the single models' %g: want the ensemble's, below", *f.Loss, *f.SingleLoss)
	}
	y := d.X.ColView(len(d.Names) - 1)
	ys := make([]float64, y.Len())
	for i := range ys {
		ys[i] = y.AtVec(i)
	}
	_, v := stat.PopMeanVariance(ys, nil)
	if f.R2 == nil || !scalar.EqualWithinAbs(*f.R2, 1-*f.Loss/v, 1e-9) {
		t.Errorf("R2 %v, want 1 - mse/Var(y) = %g", f.R2, 1-*f.Loss/v)
	}
	if len(f.Baselines) == 0 {
		t.Fatal("no baselines")
	}
	for _, b := range f.Baselines {
		if b.Gain != f.Score-b.Score || b.GainSE <= 0 {
			t.Errorf("baseline %s: gain %g (se %g), want the full model's score minus its, %g", b.Name, b.Gain, b.GainSE, f.Score-b.Score)
		}
	}
}

// TestRunCheck: a check retrains the K features the first estimator
// ranks highest, in every repetition, and reports how retrain's VIs
// agree with lazy's there: on the linear setting with independent
// features (true VIs 2.25, 1.44, 1, 0, 0, 0) the checked ones are x1 and
// x2, retrain's VI lies in lazy's interval, and the report is the same
// whatever the worker count.
func TestRunCheck(t *testing.T) {
	sim, err := simulate.Linear(600, 0, 5)
	if err != nil {
		t.Fatal(err)
	}
	d := &dataio.Dataset{Source: "linear", Names: sim.Names, X: sim.X}
	retrain, err := framework.LookupEstimator("retrain")
	if err != nil {
		t.Fatal(err)
	}
	run := func(workers int) *pipeline.Report {
		cfg := pipeline.Config{Backend: linear.Backend{}, BackendName: "linear", Seed: 2}
		opt := lazyvi.Options{Config: cfg, Estimate: pipeline.EstimateOptions{Workers: workers, Check: pipeline.Check{K: 2, Estimator: retrain}}}
		rep, err := lazyvi.Run(context.Background(), d, opt)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	rep := run(1)
	c := rep.Check
	if c == nil || c.Estimator != "retrain" || c.Of != "lazy" || !reflect.DeepEqual(c.Features, []string{"x1", "x2"}) || len(c.Results) != 2 {
		t.Fatalf("check %+v, want retrain of lazy on x1, x2", c)
	}
	for i, r := range c.Results {
		if r.Feature != c.Features[i] || r.Estimator != "retrain" || math.Abs(r.VI-sim.Truth[i]) > 4*r.SE {
			t.Errorf("retrain on %s: %+v, truth %g", c.Features[i], r, sim.Truth[i])
		}
	}
	if c.Inside != 2 || c.MaxDiffSE > 1 {
		t.Errorf("lazy and retrain disagree on a linear model: inside %d of 2, largest difference %g se", c.Inside, c.MaxDiffSE)
	}
	for _, r := range rep.Results {
		if r.Estimator == "retrain" {
			t.Fatalf("the check's retrain among the run's results: %+v", r)
		}
	}
	if got := run(2); !reflect.DeepEqual(stripSeconds(got), stripSeconds(rep)) {
		t.Errorf("workers 1 and 2 give different reports:\n%+v\n%+v", got.Check, rep.Check)
	}

	cfg := pipeline.Config{Backend: linear.Backend{}, BackendName: "linear", Seed: 2}
	_, err = lazyvi.Run(context.Background(), d, lazyvi.Options{Config: cfg, Estimate: pipeline.EstimateOptions{Check: pipeline.Check{K: 2, Estimator: retrain}, Shard: pipeline.Shard{Index: 0, Count: 2}}})
	if err == nil {
		t.Error("a check of a shard ran; want it refused")
	}
}

// stripSeconds is the report without its timings.
func stripSeconds(r *pipeline.Report) *pipeline.Report {
	c := *r
	c.Full.Seconds = 0
	c.Results = append(c.Results[:0:0], r.Results...)
	for i := range c.Results {
		c.Results[i].Seconds = 0
	}
	if r.Check != nil {
		ck := *r.Check
		ck.Results = append(ck.Results[:0:0], r.Check.Results...)
		for i := range ck.Results {
			ck.Results[i].Seconds = 0
		}
		c.Check = &ck
	}
	return &c
}
