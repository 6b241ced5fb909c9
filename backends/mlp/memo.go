package mlp

import (
	"sync"

	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
)

// signalsEntry is what the model's memo (nn.Memo) keeps of an input: its
// forward and backward signals at the fitted parameters, which the
// kernel's and the Jacobian products' calls on the same rows share, and
// their float32 copies for the single-precision products, made on first
// use. The private copy of the input is acts.acts[0].
type signalsEntry struct {
	acts   *activations
	deltas []blas64.General
	f32    *signals32
}

// signals32 is the float32 copy of an entry's signals (acts[l], n x in,
// and deltas[l], n x out, laid out as the float64 ones), made once by
// singleOf.
type signals32 struct {
	once   sync.Once
	acts   []blas32.General
	deltas []blas32.General
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

// entryOf is signalsOf, returning the memo's entry.
func (md *Model) entryOf(x blas64.General) signalsEntry {
	e, _ := md.memo.Values(x, func(xc blas64.General) (signalsEntry, int, error) {
		acts, deltas := md.signals(xc)
		size := len(xc.Data) + len(acts.out) + len(acts.prob)
		for l := range acts.acts {
			size += len(acts.acts[l].Data)
		}
		for _, d := range deltas {
			size += len(d.Data)
		}
		return signalsEntry{acts: acts, deltas: deltas, f32: new(signals32)}, 8 * size, nil
	})
	return e
}

// singleOf returns the float32 copies of the signals of x (e, its entry),
// converting them on first use and charging their bytes to the memo's
// budget (to e, if it is still x's entry). The result is shared: callers must not write it.
func (md *Model) singleOf(x blas64.General, e signalsEntry) *signals32 {
	s := e.f32
	s.once.Do(func() {
		size := 0
		s.acts = make([]blas32.General, len(e.acts.acts))
		for l, a := range e.acts.acts {
			s.acts[l] = toSingle(a)
			size += len(s.acts[l].Data)
		}
		s.deltas = make([]blas32.General, len(e.deltas))
		for l, d := range e.deltas {
			s.deltas[l] = toSingle(d)
			size += len(s.deltas[l].Data)
		}
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
