package pipeline_test

import (
	"context"
	"errors"
	"testing"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/measures"
	"github.com/lazyvi/lazyvi/pipeline"
)

// TestRunRepeatedPerturbed: Run with Config.Repeats trains each
// repetition's own models and says so in the report; perturbed inference's
// shards of the features merge into exactly the whole run's results (the
// noise is keyed by the feature's name, not its position in the shard);
// a negative count of repetitions is refused.
func TestRunRepeatedPerturbed(t *testing.T) {
	ctx := context.Background()
	d := dataset(120, 5)
	ests := []framework.Estimator{shift{0.5}}
	fits := 0
	cfg := pipeline.Config{Backend: savingBackend{&fits}, BackendName: "saving", Seed: 3, CrossFit: 3}
	opt := pipeline.EstimateOptions{InferOptions: inference.InferOptions{Inference: inference.Perturbed, Perturb: 0.7}, Workers: 2}
	once, err := pipeline.Run(ctx, d, cfg, measures.MSE(), ests, opt)
	if err != nil {
		t.Fatal(err)
	}
	fitsOnce := fits
	fits = 0
	cfg.Repeats = 2
	whole, err := pipeline.Run(ctx, d, cfg, measures.MSE(), ests, opt)
	if err != nil {
		t.Fatal(err)
	}
	if fits != 2*fitsOnce || fitsOnce == 0 {
		t.Errorf("2 repetitions fitted %d models, one run %d; want twice as many", fits, fitsOnce)
	}
	if whole.Inference != "perturbed" || whole.Perturb != 0.7 || whole.CrossFit != 3 || whole.Repeats != 2 || once.Repeats != 0 {
		t.Errorf("report: inference %s perturb %v crossfit %d repeats %d (one run: repeats %d); want perturbed 0.7 3 2 (0)",
			whole.Inference, whole.Perturb, whole.CrossFit, whole.Repeats, once.Repeats)
	}
	if whole.Results[0].VI == once.Results[0].VI {
		t.Errorf("the repeated run's VI %v is the single run's", whole.Results[0].VI)
	}

	var parts []pipeline.NamedReport
	for k, name := range []string{"s1.json", "s2.json"} {
		o := opt
		o.Shard, o.RunID = pipeline.Shard{Index: k, Count: 2}, "run"
		r, err := pipeline.Run(ctx, d, cfg, measures.MSE(), ests, o)
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, pipeline.NamedReport{Name: name, Report: r})
	}
	merged, err := pipeline.MergeReports(parts)
	if err != nil {
		t.Fatal(err)
	}
	if len(merged.Results) != len(whole.Results) {
		t.Fatalf("merged %d results, want %d", len(merged.Results), len(whole.Results))
	}
	for i, w := range whole.Results {
		g := merged.Results[i]
		if g.Feature != w.Feature || g.VI != w.VI || g.SE != w.SE || g.PValue != w.PValue {
			t.Errorf("result %d: merged shards %s vi %v se %v p %v, whole run %s vi %v se %v p %v",
				i, g.Feature, g.VI, g.SE, g.PValue, w.Feature, w.VI, w.SE, w.PValue)
		}
	}

	for _, r := range []int{-1, pipeline.MaxRepeats + 1, 1e9} {
		bad := cfg
		bad.Repeats = r
		_, err = pipeline.Run(ctx, d, bad, measures.MSE(), ests, opt)
		var fe *framework.FieldError
		if !errors.As(err, &fe) || fe.Field != "Config.Repeats" || !errors.Is(err, framework.ErrUsage) {
			t.Errorf("repeats %d: err %v, want a usage error on Config.Repeats", r, err)
		}
	}
}
