package lazy

import (
	"context"
	"testing"

	"github.com/lazyvi/lazyvi/backends/cnn"
	"github.com/lazyvi/lazyvi/backends/mlp"
	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/pipeline"
)

// digitsCSV is the handwritten digits data set (1797 rows, 64 pixels, 10
// classes; roar's copy).
const digitsCSV = "../roar/testdata/digits.csv"

// BenchmarkDigitsLazy times lazy on the first 8 pixels of digits.csv with a
// hidden-100 network, as vi bench data --hidden 100 --features 8
// --workers 1 does (in process, no plugin transport), and logs the VIs:
//
//	go test -run X -bench DigitsLazy -benchtime 1x ./estimators/lazy
func BenchmarkDigitsLazy(b *testing.B) {
	benchDigitsLazy(b, pipeline.Config{Backend: mlp.Backend{}, BackendName: "mlp", Options: map[string]string{"hidden": "100"}}, 0, 8)
}

// BenchmarkDigitsCNNLazy times lazy on 16 pixels (rows 3 and 4) of
// digits.csv with the default CNN (17,258 parameters, 10 classes), one
// worker, in process, and logs each pixel's VI, penalty and Krylov steps
// (the search on all the rows and the final solve). The CNN's baseline
// chooses no update there, so each pixel's search starts at the top of the
// grid (nearStart):
//
//	go test -run X -bench DigitsCNNLazy -benchtime 1x ./estimators/lazy
func BenchmarkDigitsCNNLazy(b *testing.B) {
	benchDigitsLazy(b, pipeline.Config{Backend: cnn.Backend{}, BackendName: "cnn", Options: map[string]string{"image": "8x8"}}, 24, 40)
}

// benchDigitsLazy prepares digits.csv with cfg (seed 1) and times lazy on
// features lo..hi-1, one worker, plain inference, logging each feature's
// VI, penalty, Krylov steps, flops and seconds.
func benchDigitsLazy(b *testing.B, cfg pipeline.Config, lo, hi int) {
	ctx := context.Background()
	d, err := dataio.LoadCSV(ctx, digitsCSV)
	if err != nil {
		b.Fatal(err)
	}
	cfg.Seed = 1
	p, err := pipeline.Prepare(ctx, d, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	m, err := framework.LookupMeasure(p.Task.DefaultMeasure())
	if err != nil {
		b.Fatal(err)
	}
	feats := p.Features()[lo:hi]
	b.ResetTimer()
	for b.Loop() {
		res, err := pipeline.Estimate(ctx, p, m, []framework.Estimator{Estimator{}}, feats, pipeline.EstimateOptions{InferOptions: inference.InferOptions{Inference: inference.Plain}, Workers: 1})
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range res {
			l, _ := r.Get(statLambda)
			s, _ := r.Get(statSteps)
			fl, _ := r.Get(statFlops)
			b.Logf("%s vi %.17g lambda %v steps %v flops %v s %.3f", r.Feature, r.VI, l, s, fl, r.Seconds)
		}
	}
}
