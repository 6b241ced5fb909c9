package mlp

import (
	"context"
	"math"
	"math/bits"
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

// The kernels (float64 and single precision, the upper triangle mirrored
// and a cross kernel) over scratch buffers holding NaN everywhere are the
// same as over fresh memory: every value of the transposed signals and of
// a block's Grams is written before it is read.
func TestKernelReusedBuffers(t *testing.T) {
	ctx := context.Background()
	md, x := smallProblem(t, framework.Regression, "7,5", 300) // more rows than a block
	x2 := mat.DenseCopyOf(x.Slice(0, 40, 0, x.RawMatrix().Cols))
	kernels := map[string]func(x1, x2 mat.Matrix) (*mat.Dense, error){
		"double": func(x1, x2 mat.Matrix) (*mat.Dense, error) { return md.Kernel(ctx, x1, x2) },
		"single": func(x1, x2 mat.Matrix) (*mat.Dense, error) { return md.SingleKernel().Kernel(ctx, x1, x2) },
	}
	for name, kernel := range kernels {
		for _, other := range []mat.Matrix{nil, x2} {
			want, err := kernel(x, other)
			if err != nil {
				t.Fatal(err)
			}
			n1, _ := x.Dims()
			s2 := n1
			if other != nil {
				s2, _ = other.Dims()
			}
			size := gramsSize(n1, s2, 1, name == "single")
			for _, ly := range md.layers {
				size += s2 * (ly.in + ly.out)
			}
			for range 4 {
				dirty := make([]float64, size)
				for i := range dirty {
					dirty[i] = math.NaN()
				}
				kernelScratch.Put(dirty)
				dirty32 := make([]float32, 1<<bits.Len(uint(size))) // the pool's size class of size
				for i := range dirty32 {
					dirty32[i] = float32(math.NaN())
				}
				putScratch32(&dirty32)
			}
			got, err := kernel(x, other)
			if err != nil {
				t.Fatal(err)
			}
			if !mat.Equal(got, want) {
				t.Fatalf("%s kernel (x2 nil: %v) over reused buffers differs from the one over fresh memory", name, other == nil)
			}
		}
	}
}

// Predictions of more rows than a chunk are those of each row predicted
// alone, for every task: to the bit where the products sum in one fixed
// order whatever the number of rows (exactProducts), else within the
// error bound of the two computations (predictionBound).
func TestPredictChunks(t *testing.T) {
	ctx := context.Background()
	for _, task := range []framework.Task{framework.Regression, framework.Binary, framework.Multiclass} {
		md, x := smallProblem(t, task, "9,4", predictChunkRows+77)
		all, err := md.Predict(ctx, x)
		if err != nil {
			t.Fatal(err)
		}
		n, p := x.Dims()
		for i := 0; i < n; i += 37 {
			one, err := md.Predict(ctx, x.Slice(i, i+1, 0, p))
			if err != nil {
				t.Fatal(err)
			}
			whole := all.Slice(i, i+1, 0, md.head.Outs)
			if exactProducts {
				if !mat.Equal(one, whole) {
					t.Fatalf("%v: row %d alone %v, in the whole pass %v", task, i, mat.Formatted(one), mat.Formatted(whole))
				}
				continue
			}
			bound := predictionBound(md, x.RawRowView(i))
			for k := 0; k < md.head.Outs; k++ {
				a, b := one.At(0, k), whole.At(0, k)
				if math.Abs(a-b) > bound+16*u64*(math.Abs(a)+math.Abs(b)) {
					t.Fatalf("%v: row %d output %d alone %v, in the whole pass %v: more apart than the bound %g", task, i, k, a, b, bound)
				}
			}
		}
	}
}

// predictionBound bounds how far two float64 forward passes of the row x
// that sum in different orders move its predictions apart, to first
// order (Higham, Accuracy and Stability, 3.1 and 3.5): each layer's
// outputs are dots of in terms plus the bias, within gamma(in + 2) of
// Zbar = |A| |W|^T + |b| of their inputs' error, and the ReLU is
// 1-Lipschitz, so with every unit counted active either pass's raw outputs
// lie within gamma(C) Zbar_L of the exact ones (C the sum of in + 2 over
// the layers), and the two within twice that. The link scales it by its
// largest slope: sd for regression, 1/4 for the sigmoid, 1/2 for softmax
// (|dp_k| <= 2 p_k (1 - p_k) max |dz|). The caller adds a few units of
// roundoff of the predictions for the link's own evaluation.
func predictionBound(md *Model, x []float64) float64 {
	zbar := make([]float64, len(x))
	for i, v := range x {
		zbar[i] = math.Abs(v)
	}
	c := 0
	for _, ly := range md.layers {
		w, b := ly.weights(md.trained.Theta), ly.bias(md.trained.Theta)
		next := make([]float64, ly.out)
		for o := range next {
			next[o] = math.Abs(b[o])
			for k, a := range zbar {
				next[o] += math.Abs(w.Data[o*w.Stride+k]) * a
			}
		}
		zbar, c = next, c+ly.in+2
	}
	slope := 0.5
	switch md.head.Task {
	case framework.Regression:
		s := []float64{0}
		md.head.Link([]float64{0}, s)
		slope = math.Abs(s[0])
	case framework.Binary:
		slope = 0.25
	}
	most := 0.0
	for _, v := range zbar {
		most = max(most, v)
	}
	return 2 * gamma(c, u64) * most * slope
}
