//go:build !purego

package nn

const haveAsm = true

// biasReLU64AVX2 sets the first w (a multiple of 4) values of each of the
// rows of z (ld values apart) to max(z + b, 0) + 0 (see biasReLUVector).
//
//go:noescape
func biasReLU64AVX2(z *float64, rows, ld, w int, b *float64)

// biasReLU32AVX2 is biasReLU64AVX2 in float32, w a multiple of 8.
//
//go:noescape
func biasReLU32AVX2(z *float32, rows, ld, w int, b *float32)

// reluMask64AVX2 zeroes the first n (a multiple of 4) values of d where
// act's bits are all zero (+0), as ReLUMask does.
//
//go:noescape
func reluMask64AVX2(d, act *float64, n int)

// reluMask32AVX2 is reluMask64AVX2 in float32, n a multiple of 8.
//
//go:noescape
func reluMask32AVX2(d, act *float32, n int)
