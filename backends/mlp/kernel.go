package mlp

import (
	"context"
	"fmt"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/internal/linalg"
	"github.com/lazyvi/lazyvi/internal/scratch"
)

// Jacobian returns the n x M matrix of per-sample gradients of the
// prediction w.r.t. the parameters, columns in the documented flat order.
func (md *Model) Jacobian(ctx context.Context, x mat.Matrix) (*mat.Dense, error) {
	if err := md.ready(ctx); err != nil {
		return nil, err
	}
	xg, err := md.input(x)
	if err != nil {
		return nil, err
	}
	a, deltas := md.signalsOf(xg)
	if deltas == nil {
		deltas = md.multiDeltas(a)
	}
	n := xg.Rows * a.rowsPer() // n*K rows for multiclass
	jac := make([]float64, n*md.m)
	md.jacobianRows(a, deltas, 0, n, jac)
	return mat.NewDense(n, md.m, jac), nil
}

// jacobianRows writes rows i0..i1 of the Jacobian whose signals are a and
// deltas into dst, row by row (M values each).
func (md *Model) jacobianRows(a *activations, deltas []blas64.General, i0, i1 int, dst []float64) {
	rep := a.rowsPer()
	for i := i0; i < i1; i++ {
		row := dst[(i-i0)*md.m : (i-i0+1)*md.m]
		for l, ly := range md.layers {
			s := i / rep * a.acts[l].Stride
			act := a.acts[l].Data[s : s+ly.in]
			d := deltas[l].Data[i*deltas[l].Stride : i*deltas[l].Stride+ly.out]
			for o, dv := range d {
				w := row[ly.w+o*ly.in : ly.w+(o+1)*ly.in]
				for k, av := range act {
					w[k] = dv * av
				}
			}
			copy(row[ly.b:ly.b+ly.out], d)
		}
	}
}

// gramChunkRows is the number of the Jacobian's rows Gram forms at a time:
// a chunk of them (gramChunkRows x M) stays in cache while it is added to
// G, where the whole Jacobian (n x M) would be written to memory and read
// back.
const gramChunkRows = 256

// Gram implements framework.GramBuilder: G = Phi(x)^T Phi(x) and b = Phi(x)^T
// e, the Jacobian formed gramChunkRows rows at a time and added to G by a
// symmetric rank-k update (blas64.Syrk, beta 1 after the first chunk) and
// to b by a product (blas64.Gemv). Each entry's sum runs over the rows in
// order, as one update and one product of the whole Jacobian would
// (jacobian.GramFromJacobian), without its n x M values. G's upper
// triangle, which is all a SymDense reads, is written into dst where it
// holds M x M values (its lower triangle is left as it was).
func (md *Model) Gram(ctx context.Context, x mat.Matrix, e []float64, dst []float64) (*mat.SymDense, []float64, error) {
	if err := md.ready(ctx); err != nil {
		return nil, nil, err
	}
	xg, err := md.input(x)
	if err != nil {
		return nil, nil, err
	}
	a, deltas := md.signalsOf(xg)
	if deltas == nil {
		deltas = md.multiDeltas(a)
	}
	n, m := xg.Rows*a.rowsPer(), md.m
	if len(e) != n {
		return nil, nil, fmt.Errorf("mlp: Gram: len(e) = %d, want %d (the Jacobian's rows)", len(e), n)
	}
	data := make([]float64, m*m)
	if cap(dst) >= m*m {
		data = dst[:m*m]
		if n == 0 {
			clear(data) // no chunk's update writes G
		}
	}
	g := blas64.Symmetric{N: m, Stride: m, Data: data, Uplo: blas.Upper}
	b := make([]float64, m)
	buf := gramScratch.Take(min(gramChunkRows, n) * m)
	defer gramScratch.Put(buf)
	for i0 := 0; i0 < n; i0 += gramChunkRows {
		if err := ctx.Err(); err != nil {
			return nil, nil, fmt.Errorf("mlp: Gram: %w", err)
		}
		i1 := min(i0+gramChunkRows, n)
		md.jacobianRows(a, deltas, i0, i1, buf)
		chunk := blas64.General{Rows: i1 - i0, Cols: m, Stride: m, Data: buf[:(i1-i0)*m]}
		beta := 1.0
		if i0 == 0 {
			beta = 0
		}
		blas64.Syrk(blas.Trans, 1, chunk, beta, g)
		blas64.Gemv(blas.Trans, 1, chunk, blas64.Vector{N: i1 - i0, Inc: 1, Data: e[i0:i1]}, beta, blas64.Vector{N: m, Inc: 1, Data: b})
	}
	return mat.NewSymDense(m, g.Data), b, nil
}

// gramScratch keeps Gram's chunk of Jacobian rows (gramChunkRows x M)
// between calls: the lazy estimator forms a Gram per fold block and
// feature. jacobianRows writes every value of the rows it is given.
var gramScratch = scratch.New[float64](2 * time.Second)

// JacobianTVec returns Phi(x)^T a without forming Phi: per layer,
// dW = Delta^T diag(a) A and db = Delta^T a.
func (md *Model) JacobianTVec(ctx context.Context, x mat.Matrix, a []float64) ([]float64, error) {
	if err := md.ready(ctx); err != nil {
		return nil, err
	}
	xg, err := md.input(x)
	if err != nil {
		return nil, err
	}
	n := xg.Rows * md.head.RowsPerSample()
	if len(a) != n {
		return nil, fmt.Errorf("mlp: JacobianTVec: len(a) = %d, want %d (the Jacobian's rows)", len(a), n)
	}
	acts, deltas := md.signalsOf(xg)
	out := make([]float64, md.m)
	width := 0
	for _, d := range deltas {
		width = max(width, d.Cols)
	}
	buf := tvecScratch.Get(n * width)
	tvecScratch.Put(md.jacobianTVec(acts, deltas, a, out, buf, false))
	return out, nil
}

// tvecScratch keeps JacobianTVec's scratch (a layer's signals scaled by
// the vector: 1 MB at 1333 rows of width 100) between calls, which the
// lazy estimator's penalty search makes several of a candidate.
var tvecScratch = scratch.New[float64](2 * time.Second)

// kernelBlockRows is the number of rows of K computed per block: the
// temporaries are two kernelBlockRows x n2 matrices instead of n1 x n2.
const kernelBlockRows = 256

// Kernel returns K = Phi(x1) Phi(x2)^T without forming Phi:
//
//	K = sum_l (Delta_l(x1) Delta_l(x2)^T) o (A_l(x1) A_l(x2)^T + 1)
//
// with A_l the input of layer l and Delta_l the backprop signal at its
// output (o is the elementwise product, the +1 the bias). For multiclass
// the K rows of a sample share its A_l, so the Grams of the activations
// are a sample's and expanded (entry (i, j) of the kernel takes entry
// (i / K, j / K) of theirs). A nil x2 means
// x1; only the upper triangle is computed then, and mirrored, so the result
// is exactly symmetric.
func (md *Model) Kernel(ctx context.Context, x1, x2 mat.Matrix) (*mat.Dense, error) {
	return md.kernel(ctx, x1, x2, false)
}

// KernelInto implements framework.InPlaceKerneler: Kernel, in dst's memory
// when it holds the result.
func (md *Model) KernelInto(ctx context.Context, x1, x2 mat.Matrix, dst []float64) (*mat.Dense, error) {
	return md.kernelInto(ctx, x1, x2, false, dst)
}

// kernel is Kernel; with single (singleKernel's), for a model of one
// output a row, the Grams of the layers' signals are blas32 products of
// their float32 pass's (the memo's, singleOf) and their elementwise
// products are summed into K in float64.
func (md *Model) kernel(ctx context.Context, x1, x2 mat.Matrix, single bool) (*mat.Dense, error) {
	return md.kernelInto(ctx, x1, x2, single, nil)
}

// kernelInto is kernel, in dst's memory when it holds the result (which is
// then cleared first: the same sums from zero).
func (md *Model) kernelInto(ctx context.Context, x1, x2 mat.Matrix, single bool, dst []float64) (*mat.Dense, error) {
	if err := md.ready(ctx); err != nil {
		return nil, err
	}
	xg1, err := md.input(x1)
	if err != nil {
		return nil, err
	}
	sym := x2 == nil
	xg2 := xg1
	if !sym {
		if xg2, err = md.input(x2); err != nil {
			return nil, err
		}
	}
	single = single && md.singleRows()
	var kb kernelBlocks
	if single {
		kb = md.kernelSignals32(xg1, xg2, sym)
	} else {
		kb = md.kernelSignals64(xg1, xg2, sym)
	}
	n1, n2 := xg1.Rows*kb.rep, xg2.Rows*kb.rep
	var k []float64
	if cap(dst) >= n1*n2 {
		k = dst[:n1*n2]
		clear(k)
	} else {
		k = make([]float64, n1*n2)
	}
	bs := min(kernelBlockRows, n1)
	kb.k, kb.n2 = k, n2
	if single {
		kb.ga32, kb.gd32 = kb.take32(bs*n2), kb.take32(bs*n2)
		defer putScratch32(kb.buf32)
	} else {
		kb.ga, kb.gd = kb.take((bs/kb.rep+2)*kb.s2), kb.take(bs*n2)
		defer kernelScratch.Put(kb.buf)
	}
	for i0 := 0; i0 < n1; i0 += bs {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("mlp: Kernel: %w", err)
		}
		rows := min(bs, n1-i0)
		j0 := 0
		if sym {
			j0 = i0 // upper trapezoid: columns from the block's diagonal on
		}
		if single {
			kb.add32(i0, j0, rows)
		} else {
			kb.add64(i0, j0, rows)
		}
	}
	if sym {
		linalg.MirrorUpper(k, n1, n1)
	}
	return mat.NewDense(n1, n2, k), nil
}

// kernelBlocks sums a kernel K (n1 x n2, row-major in k) block of rows
// by block of rows: for each layer, the Gram of the activations (plus one,
// for the bias) times the Gram of the deltas, elementwise. The left-hand
// signals are a1 and d1 (f1 in single precision), the right-hand ones
// transposed (a2t, d2t; a2t32, d2t32); ga, gd (ga32, gd32) hold a block's
// Grams. With rep outputs a sample, K has rep rows a sample and the
// activations' Grams are of the s2 samples.
//
// The transposed signals and the Grams live in one scratch buffer, buf
// (buf32), which take (take32) hands out in turn; every value of them is
// written before it is read.
type kernelBlocks struct {
	layers       int
	k            []float64
	n2, s2, rep  int
	a1           *activations
	d1, a2t, d2t []blas64.General
	ga, gd       []float64
	f1           *signals32
	a2t32, d2t32 []blas32.General
	ga32, gd32   []float32
	buf          []float64
	buf32        *[]float32
	used         int
}

// kernelScratch keeps the float64 kernel's scratch (kernelBlocks.buf)
// between calls: the lazy estimator computes a kernel of the same shape
// for every feature, where fresh memory costs a page fault every 4 KiB.
var kernelScratch = scratch.New[float64](2 * time.Second)

// take returns the next n values of kb.buf.
func (kb *kernelBlocks) take(n int) []float64 {
	kb.used += n
	return kb.buf[kb.used-n : kb.used : kb.used]
}

// take32 returns the next n values of kb.buf32.
func (kb *kernelBlocks) take32(n int) []float32 {
	kb.used += n
	return (*kb.buf32)[kb.used-n : kb.used : kb.used]
}

// gramsSize is the number of values a block's two Grams take (kernelInto's
// ga and gd, or ga32 and gd32) for n1 rows against n2 = s2*rep.
func gramsSize(n1, s2, rep int, single bool) int {
	bs := min(kernelBlockRows, n1)
	if single {
		return 2 * bs * s2 * rep
	}
	return (bs/rep+2)*s2 + bs*s2*rep
}

// kernelSignals64 returns the kernel's blocks of the float64 signals of
// the rows xg1 and xg2 (the memo's; xg1's again where sym), the
// right-hand ones transposed: the Grams' inner dimensions (p, the widths,
// 1 for the output layer) are small, and with the right-hand factors
// transposed (k x n2) gonum's inner loops are axpys of length n2 instead
// of dots of length k.
func (md *Model) kernelSignals64(xg1, xg2 blas64.General, sym bool) kernelBlocks {
	e1 := md.entryOf(xg1)
	a1, d1 := e1.acts, e1.deltas
	if d1 == nil {
		d1 = md.multiDeltas(a1)
	}
	a2, d2 := a1, d1
	if !sym {
		e2 := md.entryOf(xg2)
		if a2, d2 = e2.acts, e2.deltas; d2 == nil {
			d2 = md.multiDeltas(a2)
		}
	}
	kb := kernelBlocks{layers: len(md.layers), s2: xg2.Rows, rep: a1.rowsPer(), a1: a1, d1: d1}
	size := gramsSize(xg1.Rows*kb.rep, kb.s2, kb.rep, false)
	for l := range md.layers {
		size += xg2.Rows*a2.acts[l].Cols + d2[l].Rows*d2[l].Cols
	}
	kb.buf = kernelScratch.Take(size)
	for l := range md.layers {
		a := rowsOf(a2.acts[l], xg2.Rows)
		kb.a2t = append(kb.a2t, transposeInto(kb.take(a.Rows*a.Cols), a))
		kb.d2t = append(kb.d2t, transposeInto(kb.take(d2[l].Rows*d2[l].Cols), d2[l]))
	}
	return kb
}

// kernelSignals32 is kernelSignals64 from the float32 passes (a model of
// one output a row).
func (md *Model) kernelSignals32(xg1, xg2 blas64.General, sym bool) kernelBlocks {
	f1 := md.singleOf(xg1, md.cachedSingle(xg1))
	f2 := f1
	if !sym {
		f2 = md.singleOf(xg2, md.cachedSingle(xg2))
	}
	kb := kernelBlocks{layers: len(md.layers), s2: xg2.Rows, rep: 1, f1: f1}
	size := gramsSize(xg1.Rows, kb.s2, 1, true)
	for l := range md.layers {
		size += f2.acts[l].Rows*f2.acts[l].Cols + f2.deltas[l].Rows*f2.deltas[l].Cols
	}
	kb.buf32 = getScratch32(size)
	for l := range md.layers {
		a, d := f2.acts[l], f2.deltas[l]
		kb.a2t32 = append(kb.a2t32, transposeInto32(kb.take32(a.Rows*a.Cols), a))
		kb.d2t32 = append(kb.d2t32, transposeInto32(kb.take32(d.Rows*d.Cols), d))
	}
	return kb
}

// add32 adds the block of rows [i0, i0+rows) and columns [j0, n2), from
// float32 Grams summed into float64 (one output: rep is 1).
func (kb *kernelBlocks) add32(i0, j0, rows int) {
	cols := kb.n2 - j0
	gA := blas32.General{Rows: rows, Cols: cols, Stride: cols, Data: kb.ga32[:rows*cols]}
	gD := blas32.General{Rows: rows, Cols: cols, Stride: cols, Data: kb.gd32[:rows*cols]}
	for l := range kb.layers {
		blas32.Gemm(blas.NoTrans, blas.NoTrans, 1, sub32(kb.f1.acts[l], i0, rows), colsOf32(kb.a2t32[l], j0), 0, gA)
		blas32.Gemm(blas.NoTrans, blas.NoTrans, 1, sub32(kb.f1.deltas[l], i0, rows), colsOf32(kb.d2t32[l], j0), 0, gD)
		for r := 0; r < rows; r++ {
			kr := kb.k[(i0+r)*kb.n2+j0 : (i0+r+1)*kb.n2]
			ar, dr := gA.Data[r*cols:(r+1)*cols], gD.Data[r*cols:(r+1)*cols]
			for c := range kr {
				kr[c] += float64(dr[c]) * (float64(ar[c]) + 1)
			}
		}
	}
}

// add64 adds the block of rows [i0, i0+rows) and columns [j0, n2) in
// float64.
func (kb *kernelBlocks) add64(i0, j0, rows int) {
	rep, n2, cols := kb.rep, kb.n2, kb.n2-j0
	// The samples of the block's rows and columns, for the Grams of the
	// activations.
	r0, c0 := i0/rep, j0/rep
	srows, scols := (i0+rows-1)/rep+1-r0, kb.s2-c0
	gA := blas64.General{Rows: srows, Cols: scols, Stride: scols, Data: kb.ga[:srows*scols]}
	gD := blas64.General{Rows: rows, Cols: cols, Stride: cols, Data: kb.gd[:rows*cols]}
	for l := range kb.layers {
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, sub(kb.a1.acts[l], r0, srows), colsOf(kb.a2t[l], c0), 0, gA)
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, sub(kb.d1[l], i0, rows), colsOf(kb.d2t[l], j0), 0, gD)
		for r := 0; r < rows; r++ {
			kr := kb.k[(i0+r)*n2+j0 : (i0+r+1)*n2]
			ar := gA.Data[((i0+r)/rep-r0)*scols : ((i0+r)/rep-r0+1)*scols]
			dr := gD.Data[r*cols : (r+1)*cols]
			if rep == 1 {
				for c := range kr {
					kr[c] += dr[c] * (ar[c] + 1)
				}
				continue
			}
			// Column c is sample (j0 + c) / rep's.
			for c, t := 0, 0; c < cols; t++ {
				av := ar[t] + 1
				for end := min((c0+t+1)*rep-j0, cols); c < end; c++ {
					kr[c] += dr[c] * av
				}
			}
		}
	}
}

// sub returns rows [i0, i0+rows) of g.
func sub(g blas64.General, i0, rows int) blas64.General {
	return blas64.General{Rows: rows, Cols: g.Cols, Stride: g.Stride, Data: g.Data[i0*g.Stride : (i0+rows-1)*g.Stride+g.Cols]}
}

// colsOf returns columns [j0, g.Cols) of g.
func colsOf(g blas64.General, j0 int) blas64.General {
	return blas64.General{Rows: g.Rows, Cols: g.Cols - j0, Stride: g.Stride, Data: g.Data[j0:]}
}

// transposeInto returns g^T in dst's g.Rows*g.Cols values.
func transposeInto(dst []float64, g blas64.General) blas64.General {
	t := blas64.General{Rows: g.Cols, Cols: g.Rows, Stride: g.Rows, Data: dst[:g.Rows*g.Cols]}
	for i := 0; i < g.Rows; i++ {
		for j, v := range g.Data[i*g.Stride : i*g.Stride+g.Cols] {
			t.Data[j*g.Rows+i] = v
		}
	}
	return t
}

// sub32, colsOf32 and transposeInto32 are sub, colsOf and transposeInto for
// float32 matrices.
func sub32(g blas32.General, i0, rows int) blas32.General {
	return blas32.General{Rows: rows, Cols: g.Cols, Stride: g.Stride, Data: g.Data[i0*g.Stride : (i0+rows-1)*g.Stride+g.Cols]}
}

func colsOf32(g blas32.General, j0 int) blas32.General {
	return blas32.General{Rows: g.Rows, Cols: g.Cols - j0, Stride: g.Stride, Data: g.Data[j0:]}
}

func transposeInto32(dst []float32, g blas32.General) blas32.General {
	t := blas32.General{Rows: g.Cols, Cols: g.Rows, Stride: g.Rows, Data: dst[:g.Rows*g.Cols]}
	for i := 0; i < g.Rows; i++ {
		for j, v := range g.Data[i*g.Stride : i*g.Stride+g.Cols] {
			t.Data[j*g.Rows+i] = v
		}
	}
	return t
}
