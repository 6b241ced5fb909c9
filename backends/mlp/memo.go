package mlp

import (
	"gonum.org/v1/gonum/blas/blas64"
)

// signalsEntry is what the model's memo (nn.Memo) keeps of an input: its
// forward and backward signals at the fitted parameters, which the
// kernel's and the Jacobian products' calls on the same rows share. The
// private copy of the input is acts.acts[0].
type signalsEntry struct {
	acts   *activations
	deltas []blas64.General
}

// signalsOf returns signals(x) from the memo, computing and storing them
// when they are not there. The result is shared: callers must not write it.
func (md *Model) signalsOf(x blas64.General) (*activations, []blas64.General) {
	e, _ := md.memo.Values(x, func(xc blas64.General) (signalsEntry, int, error) {
		acts, deltas := md.signals(xc)
		size := len(xc.Data) + len(acts.out) + len(acts.prob)
		for l := range acts.acts {
			size += len(acts.acts[l].Data)
		}
		for _, d := range deltas {
			size += len(d.Data)
		}
		return signalsEntry{acts: acts, deltas: deltas}, 8 * size, nil
	})
	return e.acts, e.deltas
}
