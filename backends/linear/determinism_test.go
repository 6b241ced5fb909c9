package linear

import (
	"context"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
)

// sink keeps the test's small allocations alive, so that they move where
// the allocator puts the model's next ones.
var sink [][]float64

// TestPredictSameBitsWherever: the same model predicts the same bits on
// every call, wherever the allocator puts its working vectors. With one or
// three inputs those are 8- or 24-byte objects, which Go aligns on 8 bytes
// only, and OpenBLAS's SSE2 kernels (OPENBLAS_CORETYPE=Core2, as .ci/run
// runs this package) sum in an order that depends on the alignment.
func TestPredictSameBitsWherever(t *testing.T) {
	ctx := context.Background()
	for _, p := range []int{1, 3} {
		rng := rand.New(rand.NewPCG(5, uint64(p)))
		x := randX(rng, 60, p)
		y := make([]float64, 60)
		for i := range y {
			y[i] = x.At(i, 0) + rng.NormFloat64()
		}
		md := fit(t, framework.Regression, x, y, nil)
		want, err := md.Predict(ctx, x)
		if err != nil {
			t.Fatal(err)
		}
		for k := range 64 {
			sink = append(sink, make([]float64, 1+k%3)) // shifts the next small objects by 8 bytes or not
			got, err := md.Predict(ctx, x)
			if err != nil {
				t.Fatal(err)
			}
			if !mat.Equal(got, want) {
				t.Fatalf("%d inputs, call %d: other predictions than the first call's", p, k+2)
			}
		}
		sink = nil
	}
}
