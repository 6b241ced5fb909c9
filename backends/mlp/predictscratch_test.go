package mlp

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
)

// A prediction whose hidden activations land in a reused buffer holding
// NaN everywhere is the same as one in fresh memory: the forward pass
// writes every value it reads.
func TestPredictReusedBuffer(t *testing.T) {
	ctx := context.Background()
	md, x := smallProblem(t, framework.Regression, "7,5", 40)
	dtheta := make([]float64, md.NumParams())
	for i := range dtheta {
		dtheta[i] = 1e-3 * float64(i%7-3)
	}
	want, err := md.PredictShifted(ctx, x, dtheta)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := x.Dims()
	for range 4 { // more than the list keeps on a machine of few cores
		dirty := make([]float64, n*(7+5))
		for i := range dirty {
			dirty[i] = math.NaN()
		}
		predictScratch.Put(dirty)
	}
	got, err := md.PredictShifted(ctx, x, dtheta)
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(got, want) {
		t.Fatalf("predictions over a reused buffer differ from those over fresh memory:\n%v\n%v", mat.Formatted(got.T()), mat.Formatted(want.T()))
	}
}
