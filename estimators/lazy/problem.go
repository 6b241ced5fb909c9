package lazy

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/framework/jacobian"
	"github.com/lazyvi/lazyvi/internal/timing"
)

// problem is one reduction's ridge problem: the full model's gradients g,
// the dropped train rows x (in the order the penalty search needs), their
// targets and the full model's residuals e = targets - h(x), k outputs per
// row (row i*k + j), and the reduction's stats, which the search and the
// solves fill in. The estimator's settings and the run's seed come with it.
type problem struct {
	est     Estimator
	g       framework.Gradienter
	x       *mat.Dense
	targets []float64
	e       []float64
	k       int
	seed    int64
	stats   map[string]float64
	// sent, shared with its subsets, collects the row matrices the
	// reduction gives the model, which it forgets once done.
	sent *inputs
}

// subset is the problem on the given rows of x, in that order, with the
// same model, settings and stats.
func (p *problem) subset(rows []int) *problem {
	q := *p
	q.x, q.targets, q.e = rowsOf(p.x, rows), stackRows(p.targets, rows, p.k), stackRows(p.e, rows, p.k)
	q.sent.add(q.x)
	return &q
}

// inputs are the matrices a reduction gives its model g (its train rows,
// the subsets its search and held-out rows take, its evaluation rows),
// safe for concurrent use; a nil *inputs ignores what it is given. Each is
// the reduction's own copy, which nothing changes: the model is told so
// when it is added (jacobian.Hold), and forgetting them once the
// reduction is done (jacobian.Forget) drops what the model keeps of that
// reduction alone: a network's signals of those rows, the plugin
// transport's copies.
type inputs struct {
	g  framework.Model
	mu sync.Mutex
	xs []mat.Matrix
}

func (in *inputs) add(x mat.Matrix) {
	if in == nil {
		return
	}
	in.mu.Lock()
	in.xs = append(in.xs, x)
	in.mu.Unlock()
	jacobian.Hold(in.g, x)
}

// forget tells the model that the reduction is done with its inputs.
func (in *inputs) forget() {
	in.mu.Lock()
	xs := in.xs
	in.xs = nil
	in.mu.Unlock()
	jacobian.Forget(in.g, xs...)
}

// samples is the number of rows of x.
func (p *problem) samples() int {
	n, _ := p.x.Dims()
	return n
}

// single reports whether the matrix-free products and the search at scale
// use the model's single-precision forms where it has them.
func (p *problem) single() bool { return !p.est.DoublePrecision }

// predictReduced is the reduced model: the network's predictions on the
// evaluation rows xev at the shifted parameters, with the problem's stats.
func (p *problem) predictReduced(ctx context.Context, shift *framework.Shift, xev mat.Matrix) (framework.Reduced, error) {
	shift.X = xev
	stop := timing.From(ctx).Start(stagePredict)
	defer func() { stop(shiftFlops(shift, p.g.NumParams())) }()
	preds, err := jacobian.PredictShifts(ctx, p.g, []framework.Shift{*shift})
	if err == nil && len(preds) != 1 {
		err = fmt.Errorf("%d predictions for one shift", len(preds))
	}
	if err != nil {
		return framework.Reduced{}, fmt.Errorf("predict evaluation split at shifted parameters: %w", err)
	}
	return framework.Reduced{Pred: preds[0], Stats: p.stats}, nil
}

// shiftFlops is the flops counted for a prediction at shifted parameters:
// a pass on its rows and, in the dual form, Phi^T a over its train rows,
// only those where a is not zero for the single-precision product, which
// skips the others (a cross-validation fold's held-out rows).
func shiftFlops(sh *framework.Shift, m int) float64 {
	rows, _ := sh.X.Dims()
	f := passFlops(rows, m)
	if sh.XTrain == nil {
		return f
	}
	n, _ := sh.XTrain.Dims()
	if !sh.Single {
		return f + passFlops(n, m)
	}
	k := max(1, len(sh.A)/max(1, n)) // entries of a per row
	nonzero := 0
	for i := 0; i < n; i++ {
		for _, v := range sh.A[i*k : (i+1)*k] {
			if v != 0 {
				nonzero++
				break
			}
		}
	}
	return f + passFlops(nonzero, m)
}

// foldSeedPerturb is the second word of the folds' PCG seed.
const foldSeedPerturb = 0x1a2f01d5

// foldsOf splits 0..n-1 into k seeded folds of near-equal size, each sorted.
func foldsOf(n, k int, seed int64) [][]int {
	perm := rand.New(rand.NewPCG(uint64(seed), foldSeedPerturb)).Perm(n)
	folds := make([][]int, k)
	for i, r := range perm {
		folds[i%k] = append(folds[i%k], r)
	}
	for _, f := range folds {
		slices.Sort(f)
	}
	return folds
}

// rowsOf is the given rows of x, in that order, as a new matrix.
func rowsOf(x *mat.Dense, rows []int) *mat.Dense {
	_, c := x.Dims()
	out := mat.NewDense(len(rows), c, nil)
	for i, r := range rows {
		out.SetRow(i, x.RawRowView(r))
	}
	return out
}

// allRows is 0..n-1.
func allRows(n int) []int {
	r := make([]int, n)
	for i := range r {
		r[i] = i
	}
	return r
}

// stackRows is the rows' k entries each of v, in the rows' order.
func stackRows(v []float64, rows []int, k int) []float64 {
	out := make([]float64, 0, len(rows)*k)
	for _, r := range rows {
		out = append(out, v[r*k:(r+1)*k]...)
	}
	return out
}
