package lazyvi_test

import (
	"testing"

	"github.com/lazyvi/lazyvi"
	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/pipeline"
)

// TestInferenceDefaults: the default inference is the debiased ensemble of
// three cross-fits of three folds unless the settings ask for one split
// or one repetition; a saved model's folds, repetitions and train share
// count as given (a partition's file keeps the partition's rows and
// folds), so that a run from vi train's default file is the default run
// and one from a one-split file is that split's.
func TestInferenceDefaults(t *testing.T) {
	for _, c := range []struct {
		name              string
		cfg               pipeline.Config
		crossfit, repeats int
		trainFrac         float64
		ensemble          bool
	}{
		{"default", pipeline.Config{}, 3, 3, 0, true},
		{"one repetition", pipeline.Config{Repeats: 1}, 0, 1, 0, false},
		{"train share", pipeline.Config{TrainFrac: 0.5}, 0, 0, 0.5, false},
		{"five folds", pipeline.Config{CrossFit: 5}, 5, 3, 0, true},
		{"default model file", pipeline.Config{Saved: &dataio.SavedModel{CrossFit: 3, Repeats: 3}}, 3, 3, 0, true},
		{"model file of 2 x 4", pipeline.Config{Saved: &dataio.SavedModel{CrossFit: 2, Repeats: 4}}, 2, 4, 0, true},
		{"model file of one cross-fit", pipeline.Config{Saved: &dataio.SavedModel{CrossFit: 3}}, 3, 1, 0, false},
		{"model file of one split", pipeline.Config{Saved: &dataio.SavedModel{TrainFrac: 0.7}}, 1, 1, 0.7, false},
		{"model file of repeated splits", pipeline.Config{Saved: &dataio.SavedModel{TrainFrac: 0.7, Repeats: 3}}, 1, 3, 0.7, false},
		{"model file of given evaluation rows", pipeline.Config{Partition: []int{0, 1}, Saved: &dataio.SavedModel{TrainFrac: 0.7, Repeats: 3, Partition: "p"}}, 0, 3, 0, true},
		{"model file of given evaluation rows, once", pipeline.Config{Partition: []int{0, 1}, Saved: &dataio.SavedModel{TrainFrac: 0.7, Partition: "p"}}, 0, 1, 0, false},
	} {
		cfg, opt := c.cfg, pipeline.EstimateOptions{}
		lazyvi.InferenceDefaults(&cfg, &opt)
		if cfg.CrossFit != c.crossfit || cfg.Repeats != c.repeats || cfg.TrainFrac != c.trainFrac || opt.Ensemble != c.ensemble {
			t.Errorf("%s: crossfit %d repeats %d train share %g ensemble %v; want %d %d %g %v",
				c.name, cfg.CrossFit, cfg.Repeats, cfg.TrainFrac, opt.Ensemble, c.crossfit, c.repeats, c.trainFrac, c.ensemble)
		}
		if want := c.ensemble; (opt.Inference == inference.Plain && opt.Debias) != want {
			t.Errorf("%s: inference %v debias %v; want the debiased paired estimate %v", c.name, opt.Inference, opt.Debias, want)
		}
	}
}
