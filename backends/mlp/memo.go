package mlp

import (
	"sync"

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
// A lean entry keeps only the float32 copies and the outputs (acts.out):
// where the float64 signals would take more than leanShare of the memo's
// budget (n1 66667 rows of a (512, 256) network: 873 MB), the
// single-precision products, which a lazy solve at that size uses, find
// their signals in half the bytes, and a caller that needs the float64
// ones computes them again (full).
type signalsEntry struct {
	acts   *activations
	deltas []blas64.General
	f32    *signals32
	lean   bool
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
		acts, deltas := md.signals(xc)
		size := len(xc.Data) + len(acts.out) + len(acts.prob)
		for l := range acts.acts {
			size += len(acts.acts[l].Data)
		}
		for _, d := range deltas {
			size += len(d.Data)
		}
		if deltas == nil || 8*size <= nn.MemoBudget/leanShare {
			return signalsEntry{acts: acts, deltas: deltas, f32: new(signals32)}, 8 * size, nil
		}
		s := new(signals32)
		n32 := 0
		s.once.Do(func() { n32 = s.fill(acts, deltas) })
		out := &activations{out: acts.out, rep: acts.rep}
		return signalsEntry{acts: out, f32: s, lean: true}, 4*n32 + 8*(len(xc.Data)+len(acts.out)), nil
	})
	return e
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
