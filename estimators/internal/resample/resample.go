// Package resample holds what the permutation estimators share: a random
// stream keyed by the run's seed and the feature's name (so that a feature
// draws the same whatever the workers, the order and the other features),
// and the joint permutation of a group's columns.
package resample

import (
	"hash/fnv"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// Stream returns the random stream of feature name under seed, with salt
// telling apart the streams of different uses (estimators).
func Stream(seed int64, name, salt string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(salt))
	h.Write([]byte{0})
	h.Write([]byte(name))
	return rand.New(rand.NewPCG(uint64(seed), h.Sum64()))
}

// PermuteInto sets dst's columns cols, row i, to src's row perm[i] (column
// k of src for cols[k]): the group's columns move together, so that their
// joint distribution is kept and their link to the other columns broken.
func PermuteInto(dst *mat.Dense, cols []int, src mat.Matrix, perm []int) {
	for i, from := range perm {
		for k, j := range cols {
			dst.Set(i, j, src.At(from, k))
		}
	}
}

// Columns returns the n x len(cols) matrix of x's columns cols.
func Columns(x mat.Matrix, cols []int) *mat.Dense {
	n, _ := x.Dims()
	out := mat.NewDense(n, len(cols), nil)
	for i := 0; i < n; i++ {
		for k, j := range cols {
			out.Set(i, k, x.At(i, j))
		}
	}
	return out
}
