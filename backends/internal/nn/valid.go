package nn

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/blas/blas64"

	"github.com/lazyvi/lazyvi/framework"
)

// validStream is the PCG stream of the validation slice's draw: its own,
// so that every network backend holds out the same rows for a seed.
const validStream = 0x76616c6964 // "valid"

// MinValidRows is the smallest validation slice Split holds out; with
// fewer rows early stopping watches the training loss instead.
const MinValidRows = 20

// Split is a training set dealt into the rows a network trains on and the
// validation slice its early stopping watches.
type Split struct {
	X, ValidX           blas64.General
	Target, ValidTarget []float64
}

// Valid reports whether the split has a validation slice.
func (s Split) Valid() bool { return s.ValidX.Rows > 0 }

// Monitored returns the rows (and targets) early stopping watches: the
// validation slice, or the training rows without one.
func (s Split) Monitored() (blas64.General, []float64) {
	if s.Valid() {
		return s.ValidX, s.ValidTarget
	}
	return s.X, s.Target
}

// SplitValid holds out round(frac * n) of the n rows of x (and their
// targets), drawn with a generator seeded by seed, as the validation
// slice; none when frac is 0, when that is fewer than MinValidRows rows or
// when it would leave fewer training rows than validation rows. The slice
// depends only on n, frac and seed, so a retrained model (same spec, the
// feature dropped) and every candidate of a selection hold out the same
// rows. x itself is returned, uncopied, when there is no slice.
func SplitValid(x blas64.General, target []float64, frac float64, seed int64) Split {
	n := x.Rows
	nv := int(math.Round(frac * float64(n)))
	if nv < MinValidRows || n-nv < nv {
		return Split{X: x, Target: target}
	}
	perm := NewRNG(seed, validStream).Perm(n)
	valid, train := perm[:nv], perm[nv:]
	// Keep the training rows in their original order: minibatches are
	// drawn by a shuffle anyway, and the order of the data stays the
	// caller's.
	slices.Sort(train)
	slices.Sort(valid)
	return Split{X: pickRows(x, train), Target: pick(target, train),
		ValidX: pickRows(x, valid), ValidTarget: pick(target, valid)}
}

func pickRows(x blas64.General, rows []int) blas64.General {
	p := x.Cols
	out := blas64.General{Rows: len(rows), Cols: p, Stride: p, Data: make([]float64, len(rows)*p)}
	for r, i := range rows {
		copy(out.Data[r*p:(r+1)*p], x.Data[i*x.Stride:i*x.Stride+p])
	}
	return out
}

func pick(v []float64, idx []int) []float64 {
	out := make([]float64, len(idx))
	for r, i := range idx {
		out[r] = v[i]
	}
	return out
}

// FitReport is the framework.FitReport of a training that ended as res
// says, with valid rows of validation.
func FitReport(res FitResult, valid int) framework.FitReport {
	return framework.FitReport{Epochs: len(res.Losses), StoppedBy: res.StoppedBy, ValidRows: valid, ValidLoss: res.BestLoss}
}
