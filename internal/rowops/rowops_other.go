//go:build !amd64 || purego

package rowops

const haveAsm = false

func scaleRowsAVX2(dst *float32, ldDst int, d *float32, ldD int, rows, w8 int, a *float32, sums *float64) {
	panic("rowops: no AVX2 kernels in this build")
}

func rowDots4AVX2(d *float32, ldd int, t *float32, ldt int, b *float64, w4 int, p *[4][4]float64) {
	panic("rowops: no AVX2 kernels in this build")
}
