//go:build !openblas

package linalg

import (
	"testing"

	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/lazyvi/lazyvi/internal/gemm"
)

const openblasBuild = false

// TestBLASSwapped checks that gonum's mat and the single-precision
// products (blas32) run on internal/gemm's products in this build.
func TestBLASSwapped(t *testing.T) {
	if _, ok := blas64.Implementation().(gemm.Implementation); !ok {
		t.Fatalf("blas64 implementation is %T, want gemm's", blas64.Implementation())
	}
	if _, ok := blas32.Implementation().(gemm.Implementation); !ok {
		t.Fatalf("blas32 implementation is %T, want gemm's", blas32.Implementation())
	}
}
