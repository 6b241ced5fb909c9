//go:build openblas

package linalg

import (
	"testing"

	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	blasnetlib "gonum.org/v1/netlib/blas/netlib"
)

const openblasBuild = true

// TestBLASSwapped checks that gonum's mat and the single-precision
// products (blas32) run on OpenBLAS in this build.
func TestBLASSwapped(t *testing.T) {
	if _, ok := blas64.Implementation().(blasnetlib.Implementation); !ok {
		t.Fatalf("blas64 implementation is %T, want netlib's", blas64.Implementation())
	}
	if _, ok := blas32.Implementation().(blasnetlib.Implementation); !ok {
		t.Fatalf("blas32 implementation is %T, want netlib's", blas32.Implementation())
	}
}
