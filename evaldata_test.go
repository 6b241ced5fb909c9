package lazyvi_test

import (
	"context"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi"
	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/pipeline"
)

// With given evaluation rows (Config.Partition) the default inference
// repeats the training on them, DefaultRepeats times with the predictions
// averaged, without seeded folds; one repetition asks for one split; a
// pre-trained network gets no repetitions at all.
func TestInferenceDefaultsPartition(t *testing.T) {
	part := []int{0, 0, 0, 1}
	for _, c := range []struct {
		name     string
		cfg      pipeline.Config
		ensemble bool
		repeats  int
	}{
		{"evaluation rows", pipeline.Config{Partition: part}, true, lazyvi.DefaultRepeats},
		{"evaluation rows, once", pipeline.Config{Partition: part, Repeats: 1}, false, 1},
		{"evaluation rows, crossfit 1", pipeline.Config{Partition: part, CrossFit: 1}, true, lazyvi.DefaultRepeats},
		{"loaded network", pipeline.Config{Partition: part, Options: map[string]string{pipeline.PretrainedOption: "net.pt"}}, false, 0},
	} {
		cfg, opt := c.cfg, pipeline.EstimateOptions{}
		crossfit := cfg.CrossFit
		lazyvi.InferenceDefaults(&cfg, &opt)
		if opt.Ensemble != c.ensemble || cfg.Repeats != c.repeats || cfg.CrossFit != crossfit {
			t.Errorf("%s: ensemble %v, repeats %d, crossfit %d; want %v, %d, %d", c.name, opt.Ensemble, cfg.Repeats, cfg.CrossFit, c.ensemble, c.repeats, crossfit)
		}
		if c.ensemble && (opt.Inference != inference.Plain || !opt.Debias) {
			t.Errorf("%s: inference %s, debias %v; want the ensemble's default", c.name, opt.Inference, opt.Debias)
		}
	}
}

// lazyvi.Run with the diabetes data's first 300 rows for training and the
// other 142 for evaluation (WithEvalData): three networks on the same
// rows, ensembled, every score on the 142.
func TestRunEvalData(t *testing.T) {
	d, err := lazyvi.Diabetes()
	if err != nil {
		t.Fatal(err)
	}
	n, c := d.X.Dims()
	rows := func(i, j int) *dataio.Dataset {
		return &dataio.Dataset{Source: d.Source, Names: d.Names, X: mat.DenseCopyOf(d.X.Slice(i, j, 0, c))}
	}
	joined, part, err := pipeline.WithEvalData(rows(0, 300), rows(300, n))
	if err != nil {
		t.Fatal(err)
	}
	dropout, err := framework.LookupEstimator("dropout")
	if err != nil {
		t.Fatal(err)
	}
	cfg := pipeline.Config{Seed: 1, Partition: part, Options: map[string]string{"hidden": "20"}}
	rep, err := lazyvi.Run(context.Background(), joined, lazyvi.Options{Config: cfg, Estimators: []framework.Estimator{dropout}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.NTrain != 300 || rep.NEval != n-300 || rep.CrossFit != 0 || rep.Repeats != lazyvi.DefaultRepeats || !rep.Ensemble || !rep.Partition {
		t.Errorf("n_train %d, n_eval %d, crossfit %d, repeats %d, ensemble %v, partition %v; want 300, %d, 0, %d, true, true",
			rep.NTrain, rep.NEval, rep.CrossFit, rep.Repeats, rep.Ensemble, rep.Partition, n-300, lazyvi.DefaultRepeats)
	}
}
