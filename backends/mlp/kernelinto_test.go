package mlp

import (
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/framework/jacobian"
)

// KernelInto gives Kernel's bits, in the destination's memory when it
// holds the result whatever it held before (NaNs here), in fresh memory
// when it is too small; symmetric (x2 nil) and not, for every task, in
// double and in single precision (SingleKernel).
func TestKernelInto(t *testing.T) {
	for _, task := range append(tasks, framework.Multiclass) {
		for _, single := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/single=%v", task, single), func(t *testing.T) {
				md, x := smallProblem(t, task, "40,20", 150)
				var kern framework.Kerneler = md
				if single {
					kern = md.SingleKernel()
				}
				testKernelInto(t, kern, x)
			})
		}
	}
}

// testKernelInto is TestKernelInto for one Kerneler on x.
func testKernelInto(t *testing.T, kern framework.Kerneler, x *mat.Dense) {
	x2 := x.Slice(0, 70, 0, x.RawMatrix().Cols)
	for _, other := range []bool{false, true} {
		want, err := kern.Kernel(ctx, x, nil)
		if other {
			want, err = kern.Kernel(ctx, x, x2)
		}
		if err != nil {
			t.Fatal(err)
		}
		r, c := want.Dims()
		for _, size := range []int{r*c - 1, r*c + 5} {
			dst := make([]float64, size)
			for i := range dst {
				dst[i] = math.NaN()
			}
			k, err := jacobian.KernelInto(ctx, kern, x, nil, dst)
			if other {
				k, err = jacobian.KernelInto(ctx, kern, x, x2, dst)
			}
			if err != nil {
				t.Fatal(err)
			}
			if gr, gc := k.Dims(); gr != r || gc != c {
				t.Fatalf("x2 %v: %d x %d, want %d x %d", other, gr, gc, r, c)
			}
			for i, v := range k.RawMatrix().Data {
				if math.Float64bits(v) != math.Float64bits(want.RawMatrix().Data[i]) {
					t.Fatalf("x2 %v, destination of %d: value %d is %v, want %v", other, size, i, v, want.RawMatrix().Data[i])
				}
			}
			if in := &k.RawMatrix().Data[0] == &dst[0]; in != (size >= r*c) {
				t.Fatalf("x2 %v: in a destination of %d values for %d: %v", other, size, r*c, in)
			}
		}
	}
}
