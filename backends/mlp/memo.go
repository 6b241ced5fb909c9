package mlp

import (
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/backends/internal/nn"
	"github.com/lazyvi/lazyvi/framework"
)

// signalsEntry is what the model's memo (nn.Memo) keeps of an input: its
// forward and backward signals at the fitted parameters, which the
// kernel's and the Jacobian products' calls on the same rows share, and
// their float32 copies for the single-precision products, made on first
// use. The private copy of the input is acts.acts[0].
//
// A lean entry keeps only float32 signals and the outputs (acts.out):
// where the float64 signals would take more than leanShare of the memo's
// budget (n1 66667 rows of a (512, 256) network: 873 MB), the
// single-precision products, which a lazy solve at that size uses, find
// their signals in half the bytes, and a caller that needs the float64
// ones computes them again (full). Its activations are the float64 ones
// rounded, its backward signals computed in float32 (leanSignals).
type signalsEntry struct {
	acts   *activations
	deltas []blas64.General
	f32    *signals32
	lean   bool
}

// signalValues is the count of an entry's float64 values for n rows
// besides the memo's copy of the input: the activations (the first
// layer's the input again, counted twice as the whole entry holds it), the
// signals and the outputs (a
// multiclass model's: its probabilities too; no signals).
func (md *Model) signalValues(n int) int {
	size := 0
	for _, ly := range md.layers {
		size += n * ly.in
		if md.head.Task != framework.Multiclass {
			size += n * ly.out
		}
	}
	outs := n * md.layers[len(md.layers)-1].out
	if md.head.Task == framework.Multiclass {
		outs *= 2
	}
	return size + outs
}

// leanShare is the share of the memo's budget (nn.MemoBudget) above which
// an entry's float64 signals are not kept (a lean entry).
const leanShare = 4

// signals32 is the float32 copy of an entry's signals (acts[l], n x in,
// and deltas[l], n x out, laid out as the float64 ones), made once by
// singleOf.
type signals32 struct {
	once   sync.Once
	acts   []blas32.General
	deltas []blas32.General
}

// fill makes the float32 copies of acts and deltas and returns their
// values' count.
func (s *signals32) fill(acts *activations, deltas []blas64.General) int {
	size := 0
	s.acts = make([]blas32.General, len(acts.acts))
	for l, a := range acts.acts {
		s.acts[l] = toSingle(a)
		size += len(s.acts[l].Data)
	}
	s.deltas = make([]blas32.General, len(deltas))
	for l, d := range deltas {
		s.deltas[l] = toSingle(d)
		size += len(s.deltas[l].Data)
	}
	return size
}

var _ framework.Forgetter = (*Model)(nil)

// Forget implements framework.Forgetter: the memo drops the signals of xs
// (and their float32 copies) now, the caller being done with them.
func (md *Model) Forget(xs ...mat.Matrix) { md.memo.ForgetAll(xs) }

// signalsOf returns signals(x) from the memo, computing and storing them
// when they are not there. The result is shared: callers must not write it.
func (md *Model) signalsOf(x blas64.General) (*activations, []blas64.General) {
	e := md.entryOf(x)
	return e.acts, e.deltas
}

// entryOf is signalsOf, returning the memo's entry with its float64
// signals (computed again, not kept, for a lean entry).
func (md *Model) entryOf(x blas64.General) signalsEntry {
	return md.full(x, md.cached(x))
}

// full is e, x's entry, with its float64 signals: computed again, and not
// kept, when e is lean.
func (md *Model) full(x blas64.General, e signalsEntry) signalsEntry {
	if !e.lean {
		return e
	}
	acts, deltas := md.signals(x)
	return signalsEntry{acts: acts, deltas: deltas, f32: e.f32}
}

// cached returns x's memo entry, computing and storing it when it is not
// there: lean where its float64 signals would take more than leanShare
// of the memo's budget and the model has one output a row (the float32
// copies made at once), else with them.
func (md *Model) cached(x blas64.General) signalsEntry {
	e, _ := md.memo.Values(x, func(xc blas64.General) (signalsEntry, int, error) {
		size := len(xc.Data) + md.signalValues(xc.Rows)
		if md.head.Task == framework.Multiclass || 8*size <= nn.MemoBudget/leanShare {
			acts, deltas := md.signals(xc)
			return signalsEntry{acts: acts, deltas: deltas, f32: new(signals32)}, 8 * size, nil
		}
		out, s, n32 := md.leanSignals(xc)
		return signalsEntry{acts: out, f32: s, lean: true}, 4*n32 + 8*(len(xc.Data)+len(out.out)), nil
	})
	return e
}

// leanBlockRows is how many rows a lean entry's forward pass runs on at a
// time, so that its float64 activations are held for a block only (8192
// rows of a (512, 256) network: 57 MB). Blocks keep at least that many
// rows (the last takes the remainder), so that the forward pass's matrix
// products run as gonum's blocked product, as on all the rows at once,
// and the outputs are the same to the bit.
var leanBlockRows = 8192

// leanSignals returns a lean entry's values for the rows xc, computed by
// blocks of rows: the outputs, from the float64 forward pass that Predict
// runs; the float32 copies of its activations; and the backward pass's
// signals, which only the single-precision products use, computed in
// float32 from those copies and the float32 weights (backward32), at the
// float32 products' rate instead of float64's; and the copies' count of
// values.
func (md *Model) leanSignals(xc blas64.General) (*activations, *signals32, int) {
	n := xc.Rows
	s := new(signals32)
	s.acts = make([]blas32.General, len(md.layers))
	s.deltas = make([]blas32.General, len(md.layers))
	count := 0
	for l, ly := range md.layers {
		s.acts[l] = blas32.General{Rows: n, Cols: ly.in, Stride: ly.in, Data: make([]float32, n*ly.in)}
		s.deltas[l] = blas32.General{Rows: n, Cols: ly.out, Stride: ly.out, Data: make([]float32, n*ly.out)}
		count += n * (ly.in + ly.out)
	}
	s.once.Do(func() {}) // filled here
	ps := newParams(md.layers, md.trained.Theta)
	w32 := make([]blas32.General, len(md.layers))
	for l, ly := range md.layers {
		w32[l] = toSingle(ly.weights(md.trained.Theta))
	}
	maxRows := n // the largest block's rows: the last
	if n >= 2*leanBlockRows {
		maxRows = leanBlockRows + n%leanBlockRows
	}
	a := newActivations(md.layers, maxRows)
	out, slopes := make([]float64, n), make([]float64, maxRows)
	for i0 := 0; i0 < n; {
		i1 := i0 + leanBlockRows
		if n-i1 < leanBlockRows {
			i1 = n
		}
		nb := i1 - i0
		xb := blas64.General{Rows: nb, Cols: xc.Cols, Stride: xc.Stride, Data: xc.Data[i0*xc.Stride:]}
		copy(out[i0:i1], forward(md.layers, ps, xb, a))
		for l := range md.layers {
			intoSingle(s.acts[l], i0, rowsOf(a.acts[l], nb))
		}
		md.head.Link(a.out[:nb], slopes[:nb]) // d prediction / d raw output
		last := s.deltas[len(md.layers)-1].Data[i0:i1]
		for i, v := range slopes[:nb] {
			last[i] = float32(v)
		}
		backward32(w32, s, i0, i1)
		i0 = i1
	}
	return &activations{out: out}, s, count
}

// backward32 propagates the output signals in s.deltas' last layer, rows
// i0..i1, down to the first layer's outputs in float32: each layer's
// signal is the one above it times that layer's weights w32[l] (out x in),
// masked where the layer's input (the ReLU activation s.acts[l]) is 0,
// as backward does in float64.
func backward32(w32 []blas32.General, s *signals32, i0, i1 int) {
	for l := len(w32) - 1; l > 0; l-- {
		d, prev, act := rowRange32(s.deltas[l], i0, i1), rowRange32(s.deltas[l-1], i0, i1), rowRange32(s.acts[l], i0, i1)
		blas32.Gemm(blas.NoTrans, blas.NoTrans, 1, d, w32[l], 0, prev)
		nn.ReLUMask32(prev.Data, act.Data)
	}
}

// intoSingle writes g (rounded to float32) into dst's rows from row i0.
func intoSingle(dst blas32.General, i0 int, g blas64.General) {
	for i := 0; i < g.Rows; i++ {
		row := dst.Data[(i0+i)*dst.Stride : (i0+i)*dst.Stride+g.Cols]
		for j, v := range g.Data[i*g.Stride : i*g.Stride+g.Cols] {
			row[j] = float32(v)
		}
	}
}

// singleOf returns the float32 copies of the signals of x (e, its entry),
// converting them on first use and charging their bytes to the memo's
// budget (to e, if it is still x's entry); a lean entry's are there. The
// result is shared: callers must not write it.
func (md *Model) singleOf(x blas64.General, e signalsEntry) *signals32 {
	s := e.f32
	s.once.Do(func() {
		size := s.fill(e.acts, e.deltas)
		md.memo.Charge(x, 4*size, func(v signalsEntry) bool { return v.f32 == s })
	})
	return s
}

// toSingle returns a contiguous float32 copy of g (rounded to nearest).
func toSingle(g blas64.General) blas32.General {
	out := blas32.General{Rows: g.Rows, Cols: g.Cols, Stride: g.Cols, Data: make([]float32, g.Rows*g.Cols)}
	for i := 0; i < g.Rows; i++ {
		row := out.Data[i*g.Cols : (i+1)*g.Cols]
		for j, v := range g.Data[i*g.Stride : i*g.Stride+g.Cols] {
			row[j] = float32(v)
		}
	}
	return out
}
