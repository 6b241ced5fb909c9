package mlp

import (
	"context"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
)

// The single-precision products split Phi v's rows into chunks and Phi^T
// u's pass over Delta into column blocks across goroutines (a layer of 40
// over 1700 rows is split in both); at GOMAXPROCS 1 to 3 they are the
// same to the bit.
func TestSingleProductsSplit(t *testing.T) {
	ctx := context.Background()
	md, x := smallProblem(t, framework.Regression, "40,24", 1700)
	if n, _ := x.Dims(); n*40 < scaleSplitMin || n <= productChunkRows {
		t.Fatalf("%d rows of a width-40 layer would not be split", n)
	}
	n, _ := x.Dims()
	v := mat.NewDense(md.NumParams(), 2, nil)
	u := mat.NewDense(n, 2, nil)
	for i := range md.NumParams() {
		v.Set(i, 0, float64(i%11-5)*1e-2)
		v.Set(i, 1, float64(i%7-3)*1e-2)
	}
	for i := range n {
		u.Set(i, 0, float64(i%13-6)*0.1)
		u.Set(i, 1, float64(i%5-2)*0.1)
	}
	s := md.SinglePrecision()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var wantMul, wantTMul *mat.Dense
	for procs := 1; procs <= 3; procs++ {
		runtime.GOMAXPROCS(procs)
		mul, err := s.JacobianMul(ctx, x, v)
		if err != nil {
			t.Fatal(err)
		}
		tmul, err := s.JacobianTMul(ctx, x, u)
		if err != nil {
			t.Fatal(err)
		}
		if procs == 1 {
			wantMul, wantTMul = mul, tmul
			continue
		}
		if !mat.Equal(mul, wantMul) {
			t.Errorf("GOMAXPROCS %d: Phi v differs from one goroutine's", procs)
		}
		if !mat.Equal(tmul, wantTMul) {
			t.Errorf("GOMAXPROCS %d: Phi^T u differs from one goroutine's", procs)
		}
	}
}
