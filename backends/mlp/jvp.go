package mlp

import (
	"context"
	"fmt"
	"math/bits"
	"runtime"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/backends/internal/nn"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/internal/gemm"
	"github.com/lazyvi/lazyvi/internal/parallel"
	"github.com/lazyvi/lazyvi/internal/rowops"
)

var _ framework.JacobianMultiplier = (*Model)(nil)

// The Jacobian's row i, for layer l, is the outer product of the signal
// Delta_l[i] at the layer's output and its input A_l[i] (and Delta_l[i] for
// the bias), so both products go through the signals at the fitted
// parameters (memoised, O(n x width) values) without forming the Jacobian:
//
//	(Phi v)_i = sum_l Delta_l[i] . (W_v,l A_l[i] + b_v,l)
//	Phi^T u   = per layer, dW = Delta_l^T diag(u) A_l and db = Delta_l^T u
//
// 2 n M flops per vector each, a forward pass's worth. A multiclass
// model's products are a forward and a backward pass instead
// (softmaxjvp.go).

// JacobianMul returns Phi(x) V for V of M x p (framework.JacobianMultiplier).
func (md *Model) JacobianMul(ctx context.Context, x mat.Matrix, v *mat.Dense) (*mat.Dense, error) {
	xg, e, n, err := md.productArgs(ctx, "JacobianMul", x, v, md.m, false)
	if err != nil {
		return nil, err
	}
	e = md.full(xg, e)
	acts, deltas := e.acts, e.deltas
	_, p := v.Dims()
	out := mat.NewDense(n, p, nil)
	col := make([]float64, md.m)
	var t []float64
	var ps *params
	if acts.prob != nil {
		ps = newParams(md.layers, md.trained.Theta)
		t = make([]float64, n)
	}
	for c := 0; c < p; c++ {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("mlp: JacobianMul: %w", err)
		}
		mat.Col(col, c, v)
		if acts.prob != nil {
			md.softmaxJVP(ps, acts, col, t)
			out.SetCol(c, t)
			continue
		}
		for l, ly := range md.layers {
			if cap(t) < n*ly.out {
				t = make([]float64, n*ly.out)
			}
			// T = A_l W^T + 1 b^T (n x out), then row i's dot with Delta_l[i].
			tg := blas64.General{Rows: n, Cols: ly.out, Stride: ly.out, Data: t[:n*ly.out]}
			b := ly.bias(col)
			for i := 0; i < n; i++ {
				copy(tg.Data[i*ly.out:(i+1)*ly.out], b)
			}
			blas64.Gemm(blas.NoTrans, blas.Trans, 1, rowsOf(acts.acts[l], n), ly.weights(col), 1, tg)
			d := deltas[l]
			for i := 0; i < n; i++ {
				s := 0.0
				for o, dv := range d.Data[i*d.Stride : i*d.Stride+ly.out] {
					s += dv * tg.Data[i*ly.out+o]
				}
				out.Set(i, c, out.At(i, c)+s)
			}
		}
	}
	return out, nil
}

// JacobianTMul returns Phi(x)^T U for U of (n K) x p
// (framework.JacobianMultiplier).
func (md *Model) JacobianTMul(ctx context.Context, x mat.Matrix, u *mat.Dense) (*mat.Dense, error) {
	xg, e, n, err := md.productArgs(ctx, "JacobianTMul", x, u, -1, false)
	if err != nil {
		return nil, err
	}
	e = md.full(xg, e)
	acts, deltas := e.acts, e.deltas
	_, p := u.Dims()
	out := mat.NewDense(md.m, p, nil)
	a := make([]float64, n)
	g := make([]float64, md.m)
	var scratch []float64
	var ps *params
	if acts.prob != nil {
		ps = newParams(md.layers, md.trained.Theta)
	}
	for c := 0; c < p; c++ {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("mlp: JacobianTMul: %w", err)
		}
		mat.Col(a, c, u)
		clear(g)
		if acts.prob != nil {
			md.softmaxVJP(ps, acts, a, g)
		} else {
			scratch = md.jacobianTVec(acts, deltas, a, g, scratch, true)
		}
		out.SetCol(c, g)
	}
	return out, nil
}

// productArgs checks a product's arguments (rows of v: want, or the
// Jacobian's rows when want < 0) and returns x's rows, their memo entry
// (cached's, or cachedSingle's for a single-precision product: see
// signalsEntry) and the Jacobian's rows.
func (md *Model) productArgs(ctx context.Context, op string, x mat.Matrix, v *mat.Dense, want int, single bool) (blas64.General, signalsEntry, int, error) {
	if err := md.ready(ctx); err != nil {
		return blas64.General{}, signalsEntry{}, 0, err
	}
	xg, err := md.input(x)
	if err != nil {
		return blas64.General{}, signalsEntry{}, 0, err
	}
	n := xg.Rows * md.head.RowsPerSample()
	if want < 0 {
		want = n
	}
	if r, c := v.Dims(); r != want || c < 1 {
		return blas64.General{}, signalsEntry{}, 0, fmt.Errorf("mlp: %s: %d x %d vectors, want %d rows", op, r, c, want)
	}
	if single {
		return xg, md.cachedSingle(xg), n, nil
	}
	return xg, md.cached(xg), n, nil
}

// jacobianTVec writes Phi^T a into out (len M, zero on entry) from the
// signals, using scratch (returned, grown as needed) for Delta's rows
// scaled by a. With transposed, the scaled Delta is written transposed
// (out x n) and dW = (Delta^T diag(a)) A is gonum's NoTrans x NoTrans
// product instead of the Trans x NoTrans one on Delta as it is stored,
// which gonum's kernels run faster, most on dense operands (on the real
// signals both skip the ReLU's zeros). The products
// (JacobianTMul) use it; the kernel's JacobianTVec keeps the order its
// sums had, so that the dense path's numbers stay what they were.
func (md *Model) jacobianTVec(acts *activations, deltas []blas64.General, a, out, scratch []float64, transposed bool) []float64 {
	if acts.prob != nil {
		md.softmaxVJP(newParams(md.layers, md.trained.Theta), acts, a, out)
		return scratch
	}
	n := len(a)
	for l, ly := range md.layers {
		// Delta's rows scaled by a (the signals are shared: copy).
		src := deltas[l]
		if need := n * src.Cols; cap(scratch) < need {
			scratch = make([]float64, need)
		}
		if transposed {
			dt := blas64.General{Rows: src.Cols, Cols: n, Stride: n, Data: scratch[:n*src.Cols]}
			for i := 0; i < n; i++ {
				for o, v := range src.Data[i*src.Stride : i*src.Stride+src.Cols] {
					dt.Data[o*n+i] = v * a[i]
				}
			}
			blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, dt, rowsOf(acts.acts[l], n), 0, ly.weights(out))
			b := ly.bias(out)
			for o := range b {
				b[o] = floats.Sum(dt.Data[o*n : (o+1)*n])
			}
			continue
		}
		d := blas64.General{Rows: n, Cols: src.Cols, Stride: src.Cols, Data: scratch[:n*src.Cols]}
		for i := 0; i < n; i++ {
			row := d.Data[i*d.Stride : i*d.Stride+d.Cols]
			for j, v := range src.Data[i*src.Stride : i*src.Stride+src.Cols] {
				row[j] = v * a[i]
			}
		}
		blas64.Gemm(blas.Trans, blas.NoTrans, 1, d, rowsOf(acts.acts[l], n), 0, ly.weights(out))
		nn.ColSums(ly.bias(out), d)
	}
	return scratch
}

var _ framework.SinglePrecisioner = (*Model)(nil)

// SinglePrecision returns the model's Jacobian products in single
// precision (framework.SinglePrecisioner): the same products from float32
// copies of the memoised signals (converted once per memo entry, their
// bytes counted in its budget) by blas32.Gemm, faster than JacobianMul's
// and JacobianTMul's float64 ones. A multiclass model's
// products (a forward and a backward pass per vector) stay in float64.
func (md *Model) SinglePrecision() framework.JacobianMultiplier { return single{md} }

// single is the model's single-precision products (SinglePrecision). In
// Phi v, a layer's T = A_l W_v^T is a float32 product (inputs rounded to
// float32, sums of the layer's in terms accumulated in float32) and its
// rows' dots with Delta_l, the bias b_v added to T's entries, are summed
// in float64; in Phi^T u, Delta_l's rows are scaled by u in float32 and
// dW = (diag(u) Delta_l)^T A_l is a float32 product over the n rows (db
// summed in float64). Their scratch comes from a pool (scratch32), so that
// the solves' steps do not allocate the n x width temporaries each time.
type single struct{ md *Model }

// scratch32 keeps the single-precision products' temporaries between
// calls, a pool for each power of two of their sizes: the solves' steps
// take the same sizes again, and a buffer drawn fresh from the operating
// system costs, in page faults, about what a product does.
var scratch32 [48]sync.Pool

// getScratch32 returns a buffer of n float32s (not zeroed) from
// scratch32; putScratch32 gives it back.
func getScratch32(n int) *[]float32 {
	c := bits.Len(uint(n))
	if v, ok := scratch32[c].Get().(*[]float32); ok {
		*v = (*v)[:n]
		return v
	}
	s := make([]float32, n, 1<<c)
	return &s
}

func putScratch32(v *[]float32) { scratch32[bits.Len(uint(cap(*v))-1)].Put(v) }

// JacobianMul returns Phi(x) V in single precision.
func (s single) JacobianMul(ctx context.Context, x mat.Matrix, v *mat.Dense) (*mat.Dense, error) {
	md := s.md
	if !md.singleRows() {
		return md.JacobianMul(ctx, x, v)
	}
	xg, e, n, err := md.productArgs(ctx, "JacobianMul", x, v, md.m, true)
	if err != nil {
		return nil, err
	}
	sg := md.singleOf(xg, e)
	_, p := v.Dims()
	out := mat.NewDense(n, p, nil)
	col := make([]float64, md.m)
	acc := make([]float64, n)
	chunk := min(n, productChunkRows)
	chunks := (n + chunk - 1) / chunk
	workers := min(runtime.GOMAXPROCS(0), chunks)
	// A one-output layer's T in float64 (mulRows32) and its weights.
	one := 0
	for _, ly := range md.layers {
		if ly.out == 1 {
			one = max(one, chunk+ly.in)
		}
	}
	tbs := make([]*[]float32, workers)
	ybs := make([][]float64, workers)
	for w := range tbs {
		tbs[w] = getScratch32(chunk * md.maxWidth())
		defer putScratch32(tbs[w])
		ybs[w] = make([]float64, one)
	}
	wb := getScratch32(md.numWeights())
	defer putScratch32(wb)
	ws := make([]blas32.General, len(md.layers))
	for c := 0; c < p; c++ {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("mlp: JacobianMul: %w", err)
		}
		mat.Col(col, c, v)
		clear(acc)
		off := 0
		for l, ly := range md.layers {
			ws[l] = blas32.General{Rows: ly.out, Cols: ly.in, Stride: ly.in, Data: (*wb)[off : off+ly.out*ly.in]}
			off += ly.out * ly.in
			for k, x := range ly.weights(col).Data {
				ws[l].Data[k] = float32(x)
			}
		}
		// Per chunk of rows, on up to GOMAXPROCS goroutines: for each
		// layer T = A_l W^T (rows x out), then row i's dot with
		// Delta_l[i] of T's row plus b, added to acc[i] layer by layer.
		parallel.For(workers, chunks, func(w, i int) {
			r0, r1 := i*chunk, min((i+1)*chunk, n)
			for l, ly := range md.layers {
				tg := blas32.General{Rows: r1 - r0, Cols: ly.out, Stride: ly.out, Data: (*tbs[w])[:(r1-r0)*ly.out]}
				mulRows32(rowRange32(sg.acts[l], r0, r1), ws[l], tg, ybs[w])
				rowops.AddRowDots(acc[r0:r1], rowRange32(sg.deltas[l], r0, r1), tg, ly.bias(col))
			}
		})
		out.SetCol(c, acc)
	}
	return out, nil
}

// scaleSplitMin is the fewest values (rows x columns) that scaleRowsSplit
// splits across goroutines: below it starting them costs more than the
// pass.
const scaleSplitMin = 1 << 16

// scaleRowsSplit is rowops.ScaleRows with the columns in blocks (multiples
// of 8 wide, the kernel's vector) on up to GOMAXPROCS goroutines, so that
// Phi^T u's pass over Delta runs on all the cores: each column's sum takes
// its rows in order whichever goroutine has it, the same bits as one pass.
func scaleRowsSplit(dst, d blas32.General, a []float32, sums []float64) {
	w := len(sums)
	workers := min(runtime.GOMAXPROCS(0), w/16)
	if workers < 2 || len(a)*w < scaleSplitMin {
		rowops.ScaleRows(dst, d, a, sums)
		return
	}
	per := (w/workers + 7) &^ 7
	parallel.For(workers, (w+per-1)/per, func(_, i int) {
		c0, c1 := i*per, min((i+1)*per, w)
		rowops.ScaleRows(colRange32(dst, c0, c1), colRange32(d, c0, c1), a, sums[c0:c1])
	})
}

// colRange32 is columns c0..c1 of g.
func colRange32(g blas32.General, c0, c1 int) blas32.General {
	g.Data = g.Data[c0 : (g.Rows-1)*g.Stride+c1]
	g.Cols = c1 - c0
	return g
}

// productChunkRows is the number of rows JacobianMul's single-precision
// product takes at a time, the chunks on up to GOMAXPROCS goroutines: the
// chunk's T (up to 512 x 512 float32 values, 1 MB) is still in its core's
// cache when its rows' dots with Delta read it, where T of all the rows
// would be written to memory and read back, and the dots run beside the
// other chunks' products. Each entry of T, and each row's sum, is the same
// whatever rows the chunk holds and whichever goroutine takes it.
const productChunkRows = 512

// JacobianTMul returns Phi(x)^T U in single precision.
func (s single) JacobianTMul(ctx context.Context, x mat.Matrix, u *mat.Dense) (*mat.Dense, error) {
	md := s.md
	if !md.singleRows() {
		return md.JacobianTMul(ctx, x, u)
	}
	xg, e, n, err := md.productArgs(ctx, "JacobianTMul", x, u, -1, true)
	if err != nil {
		return nil, err
	}
	sg := md.singleOf(xg, e)
	_, p := u.Dims()
	out := mat.NewDense(md.m, p, nil)
	a := make([]float32, n)
	g := out.RawMatrix().Data // one vector: its column, written in place
	if p > 1 {
		g = make([]float64, md.m)
	}
	db := make([]float64, md.maxWidth())
	sb, wb := getScratch32(n*md.maxWidth()), getScratch32(md.maxWeights())
	defer putScratch32(sb)
	defer putScratch32(wb)
	for c := 0; c < p; c++ {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("mlp: JacobianTMul: %w", err)
		}
		for i := range a {
			a[i] = float32(u.At(i, c))
		}
		runs := nonzeroRuns(a)
		for l, ly := range md.layers {
			// diag(a) Delta_l (n x out) and its column sums, db; then
			// dW = its transpose times A_l, over the rows where a is
			// not zero (a zero row adds exact zeros).
			b := db[:ly.out]
			clear(b)
			wg := blas32.General{Rows: ly.out, Cols: ly.in, Stride: ly.in, Data: (*wb)[:ly.out*ly.in]}
			beta := float32(0)
			for _, r := range runs {
				rows := r[1] - r[0]
				dg := blas32.General{Rows: rows, Cols: ly.out, Stride: ly.out, Data: (*sb)[:rows*ly.out]}
				scaleRowsSplit(dg, rowRange32(sg.deltas[l], r[0], r[1]), a[r[0]:r[1]], b)
				blas32.Gemm(blas.Trans, blas.NoTrans, 1, dg, rowRange32(sg.acts[l], r[0], r[1]), beta, wg)
				beta = 1
			}
			if beta == 0 {
				clear(wg.Data) // a is zero
			}
			for k, x := range wg.Data {
				g[ly.w+k] = float64(x)
			}
			copy(g[ly.b:ly.b+ly.out], b)
		}
		if p > 1 {
			out.SetCol(c, g)
		}
	}
	return out, nil
}

// mulRows32 sets t = a w^T (a n x in, w out x in, t n x out). Where w is
// one row (the output layer of a network with one output) it is a
// matrix-vector product that reads a's rows in place, where the packed
// GEMM would copy all of a and compute a tile of 32 columns for the one:
// gemm.Gemv32's sums, in float64 in a fixed order on a's values and w's
// widened, each rounded to float32 once, so that the bits do not depend on
// where the vectors lie in memory (a float32 Sgemv's sums follow their
// alignment). scratch holds at least in + n float64s. Phi^T u's output
// layer (JacobianTMul) stays on the GEMM: the penalty search ranks
// candidates on it, and its choice for a feature whose VI is near 0 moves
// with the products' last bits.
func mulRows32(a, w, t blas32.General, scratch []float64) {
	if w.Rows == 1 {
		x, y := scratch[:w.Cols], scratch[w.Cols:w.Cols+a.Rows]
		for j, v := range w.Data[:w.Cols] {
			x[j] = float64(v)
		}
		gemm.Gemv32(a.Rows, a.Cols, 1, a.Data, a.Stride, x, 0, y)
		for i, v := range y {
			t.Data[i*t.Stride] = float32(v)
		}
		return
	}
	blas32.Gemm(blas.NoTrans, blas.Trans, 1, a, w, 0, t)
}

// maxRuns is the most runs of non-zero rows that JacobianTMul's product
// is split into; a vector of more runs is taken whole, its zero rows with
// the others.
const maxRuns = 8

// nonzeroRuns returns the runs [lo, hi) of a's non-zero entries, in
// order: a's zeros add nothing to Phi^T a, and the lazy estimator's
// cross-validation asks for Phi^T a over all its rows with a zero on a
// fold's (one run of zeros), where the fold's rows are a third of them.
// Where a has more than maxRuns runs, or no zero, it is one run, all of
// a's rows: the product then has the same numbers as without the split.
func nonzeroRuns(a []float32) [][2]int {
	var runs [][2]int
	for i := 0; i < len(a); {
		for i < len(a) && a[i] == 0 {
			i++
		}
		lo := i
		for i < len(a) && a[i] != 0 {
			i++
		}
		if i > lo {
			runs = append(runs, [2]int{lo, i})
		}
	}
	if len(runs) > maxRuns || (len(runs) == 1 && runs[0] == [2]int{0, len(a)}) {
		return [][2]int{{0, len(a)}}
	}
	return runs
}

// rowRange32 is rows lo..hi of g.
func rowRange32(g blas32.General, lo, hi int) blas32.General {
	g.Data = g.Data[lo*g.Stride : (hi-1)*g.Stride+g.Cols]
	g.Rows = hi - lo
	return g
}

// maxWidth is the widest layer's outputs; maxWeights the most weights of
// a layer.
func (md *Model) maxWidth() int {
	w := 0
	for _, ly := range md.layers {
		w = max(w, ly.out)
	}
	return w
}

// numWeights is the weights of all the layers.
func (md *Model) numWeights() int {
	w := 0
	for _, ly := range md.layers {
		w += ly.out * ly.in
	}
	return w
}

func (md *Model) maxWeights() int {
	w := 0
	for _, ly := range md.layers {
		w = max(w, ly.out*ly.in)
	}
	return w
}

var _ framework.SingleKerneler = (*Model)(nil)

// SingleKernel returns the model's kernel and transposed product in single
// precision (framework.SingleKerneler), for the lazy estimator's penalty
// search at scale: Kernel's Grams of the layers' signals are blas32
// products of the memo's float32 copies (those of SinglePrecision's
// products), summed into K in float64, and JacobianTVec is
// SinglePrecision's JacobianTMul of one vector. A multiclass model's stay
// in float64.
func (md *Model) SingleKernel() framework.Kerneler { return singleKernel{md} }

// singleKernel is the model's single-precision Kerneler (SingleKernel).
type singleKernel struct{ md *Model }

// Kernel returns Phi(x1) Phi(x2)^T in single precision.
func (s singleKernel) Kernel(ctx context.Context, x1, x2 mat.Matrix) (*mat.Dense, error) {
	return s.md.kernel(ctx, x1, x2, true)
}

var _ framework.InPlaceKerneler = singleKernel{}

// KernelInto implements framework.InPlaceKerneler: Kernel, in dst's memory
// when it holds the result, so that a reduction's kernel reuses a finished
// one's instead of fresh memory.
func (s singleKernel) KernelInto(ctx context.Context, x1, x2 mat.Matrix, dst []float64) (*mat.Dense, error) {
	return s.md.kernelInto(ctx, x1, x2, true, dst)
}

// JacobianTVec returns Phi(x)^T a in single precision.
func (s singleKernel) JacobianTVec(ctx context.Context, x mat.Matrix, a []float64) ([]float64, error) {
	if err := s.md.ready(ctx); err != nil {
		return nil, err
	}
	xg, err := s.md.input(x)
	if err != nil {
		return nil, err
	}
	// input refuses a matrix without rows, so a is not empty here.
	if n := xg.Rows * s.md.head.RowsPerSample(); len(a) != n {
		return nil, fmt.Errorf("mlp: JacobianTVec: len(a) = %d, want %d (the Jacobian's rows)", len(a), n)
	}
	out, err := single(s).JacobianTMul(ctx, x, mat.NewDense(len(a), 1, a))
	if err != nil {
		return nil, err
	}
	return out.RawMatrix().Data, nil
}
