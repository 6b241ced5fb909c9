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

// Predictions of more rows than a chunk are, to the bit, those of each row
// predicted alone, for every task: a row's outputs do not depend on the
// rows passed with it.
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
			if !mat.Equal(one, all.Slice(i, i+1, 0, md.head.Outs)) {
				t.Fatalf("%v: row %d alone %v, in the whole pass %v", task, i, mat.Formatted(one), mat.Formatted(all.Slice(i, i+1, 0, md.head.Outs)))
			}
		}
	}
}
