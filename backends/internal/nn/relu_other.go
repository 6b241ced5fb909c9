//go:build !amd64 || purego

package nn

const haveAsm = false

func biasReLU64AVX2(z *float64, rows, ld, w int, b *float64) {
	panic("nn: no AVX2 kernels in this build")
}

func biasReLU32AVX2(z *float32, rows, ld, w int, b *float32) {
	panic("nn: no AVX2 kernels in this build")
}

func reluMask64AVX2(d, act *float64, n int) { panic("nn: no AVX2 kernels in this build") }

func reluMask32AVX2(d, act *float32, n int) { panic("nn: no AVX2 kernels in this build") }
