//go:build openblas

package linalg

/*
#cgo LDFLAGS: -llapacke -lopenblas
void openblas_set_num_threads(int num_threads);
*/
import "C"

import (
	"os"

	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
	blasnetlib "gonum.org/v1/netlib/blas/netlib"
	"gonum.org/v1/netlib/lapack/lapacke"
	lapacknetlib "gonum.org/v1/netlib/lapack/netlib"
)

// With -tags openblas every BLAS and LAPACK call in the program runs on
// OpenBLAS: gonum's mat (products, Cholesky, QR, ...) through blas64 and
// lapack64, the backends' single-precision products and kernels through
// blas32, and the routines lazy calls directly through LAPACK below. The
// #cgo LDFLAGS above are what Debian's libopenblas-dev and liblapacke-dev
// need; they travel with this package, so no CGO_LDFLAGS is required.

const implName = "openblas"

var lapackImpl Lapacker = netlibLAPACK{}

// netlibLAPACK is gonum's netlib binding (LAPACKE, row-major like gonum),
// with Dgtsv, which that binding's Implementation does not wrap, taken
// from the raw LAPACKE bindings (same signature and meaning: false when the
// system is singular).
type netlibLAPACK struct{ lapacknetlib.Implementation }

func (netlibLAPACK) Dgtsv(n, nrhs int, dl, d, du []float64, b []float64, ldb int) bool {
	return lapacke.Dgtsv(n, nrhs, dl, d, du, b, ldb)
}

func init() {
	blas64.Use(blasnetlib.Implementation{})
	blas32.Use(blasnetlib.Implementation{})
	lapack64.Use(lapacknetlib.Implementation{})
	// lazyvi parallelises across features itself (one worker per core), so
	// by default each BLAS call runs on its caller's thread alone: OpenBLAS's
	// own threads on top would oversubscribe the cores. An explicit
	// OPENBLAS_NUM_THREADS in the environment is left as it is.
	if os.Getenv("OPENBLAS_NUM_THREADS") == "" {
		C.openblas_set_num_threads(1)
	}
}
