package mlp

// The network's products run on the BLAS that internal/linalg selects (the
// packed AVX2/AVX-512 GEMM of the default build, OpenBLAS under -tags
// openblas) wherever the backend is linked, with or without an estimator.
import _ "github.com/lazyvi/lazyvi/internal/linalg"
