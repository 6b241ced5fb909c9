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

// signalsEntry is what the model's memo (nn.Memo) keeps of an input: the
// signals of its forward and backward passes at the fitted parameters,
// which the kernel's and the Jacobian products' calls on the same rows
// share. There are two passes, each run on first use and kept:
//
//   - the float64 pass (acts, deltas), which Predict's and the
//     double-precision products' numbers come from;
//   - the float32 pass (f32: pass32), which the single-precision products,
//     kernel and predictions use: the whole forward and backward pass in
//     float32 arithmetic, at the float32 products' rate and in half the
//     bytes. Its numbers depend on the input alone, never on whether the
//     float64 pass ran first.
//
// The private copy of the input is the memo's. An entry that a
// single-precision call made holds only the float32 pass (acts nil). A
// lean entry keeps the float64 pass's outputs but not its signals: where
// those would take more than leanShare of the memo's budget (n1 66667 rows
// of a (512, 256) network: 873 MB), a caller that needs them computes them
// again (full).
type signalsEntry struct {
	acts   *activations
	deltas []blas64.General
	f32    *signals32
}

// lean reports whether e holds no float64 signals: a lean entry (the
// outputs only) or one a single-precision call made (no float64 pass).
func (e signalsEntry) lean() bool { return e.acts == nil || e.acts.acts == nil }

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

// signals32 is an input's float32 pass (pass32): the activations acts[l]
// (n x in, acts[0] the input rounded), the backward signals deltas[l]
// (n x out), laid out as the float64 ones, and the raw outputs (before the
// head's link), in float64. It is filled once.
type signals32 struct {
	once   sync.Once
	acts   []blas32.General
	deltas []blas32.General
	out    []float64
}

var _ framework.Forgetter = (*Model)(nil)

// Forget implements framework.Forgetter: the memo drops the signals of xs
// (both passes) now, the caller being done with them.
func (md *Model) Forget(xs ...mat.Matrix) { md.memo.ForgetAll(xs) }

var _ framework.Holder = (*Model)(nil)

// Hold implements framework.Holder: the memo finds the signals of xs by
// their address and shape until their Forget.
func (md *Model) Hold(xs ...mat.Matrix) { md.memo.HoldAll(xs) }

// signalsOf returns signals(x) from the memo, computing and storing them
// when they are not there. The result is shared: callers must not write it.
func (md *Model) signalsOf(x blas64.General) (*activations, []blas64.General) {
	e := md.entryOf(x)
	return e.acts, e.deltas
}

// entryOf is signalsOf, returning the memo's entry with its float64
// signals (computed again, not kept, where the entry has none).
func (md *Model) entryOf(x blas64.General) signalsEntry {
	return md.full(x, md.cached(x))
}

// full is e, x's entry, with its float64 signals: computed again, and not
// kept, when e is lean or holds only the float32 pass.
func (md *Model) full(x blas64.General, e signalsEntry) signalsEntry {
	if !e.lean() {
		return e
	}
	acts, deltas := md.signals(x)
	return signalsEntry{acts: acts, deltas: deltas, f32: e.f32}
}

// outputs returns the float64 pass's raw outputs of x (e, its entry): the
// entry's, or computed (not kept) where it holds only the float32 pass.
// The result is shared: callers must not write it.
func (md *Model) outputs(x blas64.General, e signalsEntry) []float64 {
	if e.acts != nil {
		return e.acts.out
	}
	return md.forwardOutputs(x)
}

// cached returns x's memo entry, computing and storing it when it is not
// there: with the float64 pass's signals, or lean where they would take
// more than leanShare of the memo's budget and the model has one output a
// row (its outputs only). An entry a single-precision call made (the
// float32 pass only) is returned as it is.
func (md *Model) cached(x blas64.General) signalsEntry {
	e, _ := md.memo.Values(x, func(xc blas64.General) (signalsEntry, int, error) {
		size := len(xc.Data) + md.signalValues(xc.Rows)
		if md.head.Task == framework.Multiclass || 8*size <= nn.MemoBudget/leanShare {
			acts, deltas := md.signals(xc)
			return signalsEntry{acts: acts, deltas: deltas, f32: new(signals32)}, 8 * size, nil
		}
		out := md.forwardOutputs(xc)
		return signalsEntry{acts: &activations{out: out}, f32: new(signals32)}, 8 * (len(xc.Data) + len(out)), nil
	})
	return e
}

// singleRows reports whether the model's single-precision calls have a
// float32 form: one output a row (a multiclass model's stay in float64).
func (md *Model) singleRows() bool {
	return md.head.Task != framework.Multiclass && md.layers[len(md.layers)-1].out == 1
}

// cachedSingle is cached for a single-precision call: an entry made here
// holds only the float32 pass (run at once), none of the float64 one. A
// multiclass model's calls, which have no float32 form, get cached's.
func (md *Model) cachedSingle(x blas64.General) signalsEntry {
	if !md.singleRows() {
		return md.cached(x)
	}
	e, _ := md.memo.Values(x, func(xc blas64.General) (signalsEntry, int, error) {
		s := new(signals32)
		n32 := 0
		s.once.Do(func() { n32 = md.pass32(xc, s) })
		return signalsEntry{f32: s}, 4*n32 + 8*(len(xc.Data)+len(s.out)), nil
	})
	return e
}

// singleOf returns the float32 pass of x (e, its entry), running it on
// first use and charging its bytes to the memo's budget (to e, if it is
// still x's entry). The result is shared: callers must not write it.
func (md *Model) singleOf(x blas64.General, e signalsEntry) *signals32 {
	s := e.f32
	s.once.Do(func() {
		n32 := md.pass32(x, s)
		md.memo.Charge(x, 4*n32+8*len(s.out), func(v signalsEntry) bool { return v.f32 == s })
	})
	return s
}

// leanBlockRows is how many rows forwardOutputs runs the float64 forward
// pass on at a time, so that its activations are held for a block only
// (8192 rows of a (512, 256) network: 57 MB). Blocks keep at least that
// many rows (the last takes the remainder), so that the matrix products
// run as gonum's blocked product, as on all the rows at once, and the
// outputs are the same to the bit.
var leanBlockRows = 8192

// forwardOutputs returns the float64 forward pass's raw outputs of the
// rows xc (those Predict links), by blocks of leanBlockRows rows.
func (md *Model) forwardOutputs(xc blas64.General) []float64 {
	n := xc.Rows
	outs := md.layers[len(md.layers)-1].out
	ps := newParams(md.layers, md.trained.Theta)
	maxRows := n // the largest block's rows: the last
	if n >= 2*leanBlockRows {
		maxRows = leanBlockRows + n%leanBlockRows
	}
	a := newActivations(md.layers, maxRows)
	out := make([]float64, n*outs)
	for i0 := 0; i0 < n; {
		i1 := i0 + leanBlockRows
		if n-i1 < leanBlockRows {
			i1 = n
		}
		nb := i1 - i0
		xb := blas64.General{Rows: nb, Cols: xc.Cols, Stride: xc.Stride, Data: xc.Data[i0*xc.Stride:]}
		copy(out[i0*outs:i1*outs], forward(md.layers, ps, xb, a))
		i0 = i1
	}
	return out
}

// pass32 fills s with the float32 pass of the rows xc, a model of one
// output a row, and returns its count of float32 values. The forward pass
// rounds the input and the weights to float32 and computes each hidden
// layer's product in float32 (the bias added and the ReLU applied in
// float32), the output layer's dot and bias in float64; the head's slopes
// at those outputs are rounded and propagated down in float32
// (backward32). Each
// value then differs from the float64 pass's by rounding errors that the
// layers' sums compound: about eps32 (2^-24) times the sum of the widths
// summed over, relative to the absolute signals, where no pre-activation
// lies within its rounding of zero (there the ReLU's mask may differ).
func (md *Model) pass32(xc blas64.General, s *signals32) int {
	n, last := xc.Rows, len(md.layers)-1
	s.acts = make([]blas32.General, len(md.layers))
	s.deltas = make([]blas32.General, len(md.layers))
	count := 0
	for l, ly := range md.layers {
		s.acts[l] = blas32.General{Rows: n, Cols: ly.in, Stride: ly.in, Data: make([]float32, n*ly.in)}
		s.deltas[l] = blas32.General{Rows: n, Cols: ly.out, Stride: ly.out, Data: make([]float32, n*ly.out)}
		count += n * (ly.in + ly.out)
	}
	intoSingle(s.acts[0], 0, xc)
	w32 := make([]blas32.General, len(md.layers))
	for l, ly := range md.layers {
		w32[l] = toSingle(ly.weights(md.trained.Theta))
	}
	// The hidden layers' products are blas32 GEMMs; the output layer's
	// (one weight row) is a dot per row summed in float64 in order, so
	// that its bits do not follow the rows' addresses, as a float32
	// kernel's that aligns its sums on them (gonum's) would.
	for l, ly := range md.layers[:last] {
		z := s.acts[l+1]
		blas32.Gemm(blas.NoTrans, blas.Trans, 1, s.acts[l], w32[l], 0, z)
		b := ly.bias(md.trained.Theta)
		b32 := make([]float32, len(b))
		for j, v := range b {
			b32[j] = float32(v)
		}
		nn.BiasReLU(z.Data, b32)
	}
	a, w, b := s.acts[last], w32[last].Data, md.layers[last].bias(md.trained.Theta)[0]
	s.out = make([]float64, n)
	for i := range s.out {
		sum := 0.0
		for k, v := range a.Data[i*a.Stride : i*a.Stride+a.Cols] {
			sum += float64(v) * float64(w[k])
		}
		s.out[i] = sum + b
	}
	slopes := make([]float64, n)
	md.head.Link(append([]float64(nil), s.out...), slopes)
	for i, v := range slopes {
		s.deltas[last].Data[i] = float32(v)
	}
	backward32(w32, s, 0, n)
	return count
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

// toSingle returns a contiguous float32 copy of g (rounded to nearest),
// in at least 32 bytes: Go allocates those 16-byte aligned, so that a
// float32 kernel that aligns its sums on its operands' addresses
// (gonum's) sums a small matrix's rows as it does a large one's, the same
// way in every copy.
func toSingle(g blas64.General) blas32.General {
	out := blas32.General{Rows: g.Rows, Cols: g.Cols, Stride: g.Cols, Data: make([]float32, g.Rows*g.Cols, max(g.Rows*g.Cols, 8))}
	intoSingle(out, 0, g)
	return out
}
