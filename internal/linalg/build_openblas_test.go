//go:build openblas

package linalg

import (
	"testing"

	"gonum.org/v1/gonum/blas/blas64"
	blasnetlib "gonum.org/v1/netlib/blas/netlib"
)

const openblasBuild = true

// TestBLASSwapped checks that gonum's mat runs on OpenBLAS in this build.
func TestBLASSwapped(t *testing.T) {
	if _, ok := blas64.Implementation().(blasnetlib.Implementation); !ok {
		t.Fatalf("blas64 implementation is %T, want netlib's", blas64.Implementation())
	}
}
