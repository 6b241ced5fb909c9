package lazy

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/framework/jacobian"
	"github.com/lazyvi/lazyvi/internal/linalg"
	"github.com/lazyvi/lazyvi/internal/scratch"
	"github.com/lazyvi/lazyvi/internal/timing"
)

// errSingular marks a ridge system that cannot be solved at a candidate
// penalty; the search scores such a candidate as unusable.
var errSingular = errors.New("singular ridge system")

// rareShare is the share of the training rows below which a binary
// response's rarer class explains a singular ridge system.
const rareShare = 0.05

// explainSingular adds to a singular ridge system of a binary problem
// whose rarer class is rare its cause and the remedies: a network that
// predicts probabilities near 0 or 1 everywhere has gradients, scaled by
// p(1-p), near zero, and the kernel of the gradient features vanishes
// with them. Other errors pass unchanged.
func explainSingular(p *framework.Problem, err error) error {
	if err == nil || !errors.Is(err, errSingular) || p.Task != framework.Binary {
		return err
	}
	ones := 0
	for _, v := range p.YTrain {
		if v == 1 {
			ones++
		}
	}
	n := len(p.YTrain)
	rare, class := min(ones, n-ones), 1
	if n-ones < ones {
		class = 0
	}
	if float64(rare) >= rareShare*float64(n) {
		return err
	}
	return framework.Usagef("%w: the response has %d of %d training rows of class %d, so the full model's probabilities sit near 0 or 1, where its gradients (scaled by p(1-p)) and their kernel vanish; give more rows of class %d, fix the penalty (--lambda, e.g. 1), or use the dropout or retrain estimator",
		err, rare, n, class, class)
}

// ridge is the lazy ridge problem on one feature's dropped train split, in
// dual or primal form, with its rows in fold order.
type ridge interface {
	// meanDiag is trace(K)/n1 = trace(G)/n1, the penalty's natural scale.
	meanDiag() float64
	// solveAll returns the update fitted on all rows, as a Shift without
	// its X: dtheta, or in the dual form when the backend has kernels.
	solveAll(ctx context.Context, alpha float64) (framework.Shift, error)
	// fold prepares the fit without samples lo..hi (rows lo*k..hi*k) and
	// returns a solver for any set of penalties.
	fold(ctx context.Context, lo, hi int) (foldSolver, error)
}

// foldSolver returns, for each penalty, the shift whose prediction is the
// network's on the fold's held-out samples at theta_f + dtheta (nil where
// the system could not be solved): in the dual form when the backend has
// the structured kernel, so that the M-vector Phi_T^T a is formed next to
// the model.
type foldSolver func(ctx context.Context, alphas []float64) ([]*framework.Shift, error)

// maxRidgeDim bounds the side of the ridge system, min(n1 k, M), that lazy
// cross-validates: each fold holds a d x d copy of the system (72 MB at
// d = 3000) and each Lanczos step costs 2 d^2 flops, up to d steps per fold
// when the search goes to tiny penalties, and forming the system (Gram or
// kernel) costs more still.
const maxRidgeDim = 3000

// maxFixedRidgeDim and maxJacobian bound what a fixed penalty needs: the
// d x d system, a Krylov basis of up to d/6 vectors and, when that does not
// converge, a Cholesky factorisation (d^3/3 flops, d^2 doubles: 1.1 GB at
// 12000); with k > 1 outputs, the (n1 k) x M Jacobian (256M doubles is 2
// GiB).
const (
	maxFixedRidgeDim = 12000
	maxJacobian      = 1 << 28
)

// newRidge sets up the ridge problem of p's rows (the Jacobian's and the
// kernel's rows are stacked as the residuals are, row i*k + j). bounds are
// the fold boundaries in rows of x (fold f is rows bounds[f]..bounds[f+1])
// when the penalty is cross-validated, nil when it is fixed. With single,
// in the dual form, it is on the model's single-precision kernel when it
// has one (jacobian.KernelerOf), whose folds' shifts then ask for the
// single-precision Phi_T^T a too; the subsample search at scale uses it
// (lazy-precision single), while the dense path's penalty and every update
// stay on the double-precision kernel.
func (p *problem) newRidge(ctx context.Context, bounds []int, single bool) (ridge, error) {
	g, x, e, k := p.g, p.x, p.e, p.k
	cv := len(bounds) > 1
	samples, _ := x.Dims()
	n := samples * k
	m := g.NumParams()
	if m < 1 {
		return nil, fmt.Errorf("the model reports %d parameters", m)
	}
	switch d := min(n, m); {
	case cv && d > maxRidgeDim:
		return nil, framework.Usagef("lazy would cross-validate a %d x %d ridge system per feature (%d train rows x %d outputs, %d parameters): too slow here; fix the penalty with --lambda, use lazy-es, or a smaller network",
			d, d, samples, k, m)
	case d > maxFixedRidgeDim || (k > 1 && n*m > maxJacobian):
		return nil, framework.Usagef("lazy would need a %d x %d ridge system and a %d x %d Jacobian per feature (%d train rows x %d outputs, %d parameters): too large; use lazy-es or a smaller network",
			d, d, n, m, samples, k, m)
	}
	stop := timing.From(ctx).Start(stageKernel)
	if n > m {
		pm, err := p.newPrimal(ctx, bounds)
		stop(float64(n) * float64(m) * float64(m))
		return pm, err
	}
	// The backend's structured kernel when it has one: for an MLP a few
	// small matrix products per layer instead of the Jacobian's n x M
	// entries and the n^2 M flops of their Gram. A kernel of k > 1 outputs
	// that is not (n k) x (n k) (a backend whose Kernel is per sample)
	// falls back to the Jacobian.
	var km *mat.Dense
	if _, ok := framework.As[framework.SingleKerneler](g); !ok {
		single = false
	}
	if kern, ok := jacobian.KernelerOf(g, single); ok {
		var err error
		if km, err = jacobian.KernelInto(ctx, kern, x, nil, kernelBuffers.Get(n*n)); err != nil {
			return nil, fmt.Errorf("kernel: %w", err)
		}
		if r, c := km.Dims(); r != n || c != n {
			if k == 1 {
				return nil, fmt.Errorf("kernel: backend returned %d x %d for %d rows", r, c, n)
			}
			km, single = nil, false
		}
	}
	var j *mat.Dense
	if km == nil {
		var err error
		if j, err = g.Jacobian(ctx, x); err != nil {
			return nil, fmt.Errorf("jacobian: %w", err)
		}
		if r, c := j.Dims(); r != n || c != m {
			return nil, fmt.Errorf("jacobian: backend returned %d x %d for %d rows and %d parameters", r, c, n, m)
		}
	}
	d := &dual{e: e, x: x, j: j, m: m, k: k, single: single}
	if single && cv {
		// The folds' products read K rounded to float32, into a finished
		// kernel's memory: written in the symmetrising pass.
		d.k32 = kernel32Buffers.Take(n * n)
	}
	if km != nil {
		d.kfull = symmetrize(km, d.k32)
	} else {
		d.kfull = linalg.Gram(j).RawMatrix()
		for i, v := range d.kfull.Data[:len(d.k32)] {
			d.k32[i] = float32(v)
		}
	}
	d.kmat = mat.NewSymDense(n, d.kfull.Data)
	flops := 0.0 // a backend's structured kernel: not counted
	if j != nil {
		flops = float64(n) * float64(n) * float64(m)
	}
	stop(flops)
	return d, nil
}

// dual solves in the n1 x n1 kernel space: dtheta = Phi^T (K + alpha I)^-1 e.
// With a Kerneler backend neither K nor Phi^T a needs the Jacobian: the
// backend's structured products cost about as much as a product with Phi
// (for an MLP, one small matrix product per layer) without forming or
// moving its n1 x M entries (27 MB on the high-dimensional setting, whose
// every product with it streams all of them from memory); without one, the
// Jacobian j is held and K = Phi Phi^T.
type dual struct {
	kfull blas64.General // K with both triangles
	kmat  *mat.SymDense  // the same storage as a SymDense
	e     []float64
	x     *mat.Dense
	j     *mat.Dense // the Jacobian, held when the backend has no kernel
	m     int
	k     int // outputs: rows per sample
	// single: K is the model's single-precision kernel, and a fold's
	// shifts ask for Phi_T^T a in single precision; its folds' Krylov
	// products read k32, K rounded to float32 (made with K where there
	// are folds).
	single bool
	k32    []float32
}

// kernelBuffers keeps the memory of the dense dual path's kernels between
// reductions: a feature's n1 x n1 kernel (14 MB at n1 = 1333) is written
// into a finished one's (jacobian.KernelInto, released), not into fresh
// memory.
var kernelBuffers = scratch.New[float64](2 * time.Second)

// kernel32Buffers keeps the folds' float32 copies of the kernels (k32)
// between reductions likewise.
var kernel32Buffers = scratch.New[float32](2 * time.Second)

// release gives the kernel's memory back for the next reduction's; the
// problem must not be used after.
func (d *dual) release() {
	kernelBuffers.Put(d.kfull.Data)
	kernel32Buffers.Put(d.k32)
	d.kfull, d.kmat, d.k32 = blas64.General{}, nil, nil
}

// gramBuffers keeps the memory of the primal path's M x M systems between
// reductions: a feature's G and its folds' (1.3 MB each at the paper's
// linear setting, M = 401) are formed in a finished reduction's
// (jacobian.Gram's dst, released), not in fresh memory, whose page faults
// cost a reduction there about a fifth of its time. A reduction holds one
// for G and one per fold.
var gramBuffers = scratch.NewPer[float64](2*time.Second, DefaultFolds+1)

// release gives G's and the folds' memory back for the next reduction's;
// the problem must not be used after.
func (p *primal) release() {
	gramBuffers.Put(p.g.RawSymmetric().Data)
	for _, b := range p.blocks {
		gramBuffers.Put(b.g.Data)
	}
	p.g, p.blocks = nil, nil
}

// releaseRidge releases rp's memory (see dual.release, primal.release).
func releaseRidge(rp ridge) {
	switch r := rp.(type) {
	case *dual:
		r.release()
	case *primal:
		r.release()
	}
}

func (d *dual) meanDiag() float64 {
	n := d.kmat.SymmetricDim()
	t := 0.0
	for i := 0; i < n; i++ {
		t += d.kmat.At(i, i)
	}
	return t / float64(n)
}

// phiTMany returns (J_T^T A^T)^T = A J_T (k x M) for the rows T = all but
// lo..hi of the held Jacobian; A (k x |T|) has one row per vector. This
// orientation streams J's rows once, where gonum's transposed-left product
// is several times slower.
func (d *dual) phiTMany(lo, hi int, a *mat.Dense) *mat.Dense {
	n, _ := d.j.Dims()
	k, _ := a.Dims()
	out := mat.NewDense(k, d.m, nil)
	var part mat.Dense
	if lo > 0 {
		out.Mul(a.Slice(0, k, 0, lo), d.j.Slice(0, lo, 0, d.m))
	}
	if hi < n {
		part.Mul(a.Slice(0, k, lo, n-(hi-lo)), d.j.Slice(hi, n, 0, d.m))
		out.Add(out, &part)
	}
	return out
}

func (d *dual) solveAll(ctx context.Context, alpha float64) (framework.Shift, error) {
	n := d.kmat.SymmetricDim()
	a, err := shiftedSolve(ctx, fullOp{d.kfull}, d.kmat, alpha, d.e)
	if err != nil {
		return framework.Shift{}, err
	}
	if d.j == nil {
		return framework.Shift{XTrain: d.x, A: a}, nil
	}
	return framework.Shift{DTheta: d.phiTMany(n, n, mat.NewDense(1, len(a), a)).RawMatrix().Data}, nil
}

func (d *dual) fold(_ context.Context, lo, hi int) (foldSolver, error) {
	_, p := d.x.Dims()
	xH := d.x.Slice(lo, hi, 0, p).(*mat.Dense)
	lo, hi = lo*d.k, hi*d.k // rows of K
	// K_TT is K without the fold's rows and columns: used in place, no copy.
	et := append(append([]float64(nil), d.e[:lo]...), d.e[hi:]...)
	op := holeOp{k: d.kfull, lo: lo, hi: hi, k32: d.k32}
	kr := newKrylov(op, et)
	return func(ctx context.Context, alphas []float64) ([]*framework.Shift, error) {
		before := kr.flops
		as, usable, err := kr.solveMany(ctx, alphas)
		timing.From(ctx).Add(stageSearch, 0, kr.flops-before)
		if err != nil {
			return nil, err
		}
		var dthetas *mat.Dense
		if d.j != nil {
			dthetas = d.phiTMany(lo, hi, as)
			timing.From(ctx).Add(stageSearch, 0, float64(len(alphas))*passFlops(len(et), d.m))
		}
		shifts := make([]*framework.Shift, len(alphas))
		for c := range alphas {
			switch {
			case !usable[c]:
			case d.j != nil:
				shifts[c] = &framework.Shift{X: xH, DTheta: dthetas.RawRowView(c)}
			default:
				// Phi_T^T a as Phi^T a over all the rows x with a zero on
				// the fold's: the same vector (the zeros add exact
				// zeros; a network's product skips them), while the
				// model's signals of x, which the kernel computed and
				// which a plugin holds under one handle, serve every
				// fold and candidate, where the rows T would be one
				// more input per fold, sent and passed through the
				// network.
				a := make([]float64, len(d.e))
				copy(a, as.RawRowView(c)[:lo])
				copy(a[hi:], as.RawRowView(c)[lo:])
				shifts[c] = &framework.Shift{X: xH, XTrain: d.x, A: a, Single: d.single}
			}
		}
		return shifts, nil
	}, nil
}

// primal solves in the M x M parameter space: (G + alpha I) dtheta = Phi^T e.
// G and Phi^T e are sums over the folds' row blocks, each block's part
// formed once by jacobian.Gram (the backend's Gram when it has one, so
// that a plugin sends M(M+1)/2 values instead of the block's Jacobian;
// else a symmetric rank-k update of the Jacobian: n1 M^2 flops in all), so
// that a fold's training Gram is a subtraction rather than another rank-k
// downdate. The Jacobian itself is never held.
type primal struct {
	model  framework.Gradienter
	x      *mat.Dense    // the samples, in fold order
	k      int           // outputs: Jacobian rows per sample
	rows   int           // Jacobian rows, samples x k
	g      *mat.SymDense // Phi^T Phi
	b      []float64     // Phi^T e
	blocks []primalBlock
}

// primalBlock is a fold's training system: G - G_fold and b - b_fold,
// G_fold and b_fold the part of G and Phi^T e from samples lo..hi. The
// system is computed in the storage the backend gave G_fold in, with both
// triangles (for the Krylov solver's Gemv), once G is summed.
type primalBlock struct {
	lo, hi int
	g      blas64.General
	b      []float64
}

// newPrimal forms G and Phi^T e of p's rows and residuals, by fold blocks
// when bounds (in samples) are given, and then each fold's training
// system.
func (p *problem) newPrimal(ctx context.Context, bounds []int) (*primal, error) {
	g, x, e, k := p.g, p.x, p.e, p.k
	samples, cols := x.Dims()
	m := g.NumParams()
	gd := gramBuffers.Take(m * m)
	clear(gd) // the folds' Grams are added to it
	pm := &primal{x: x, rows: samples * k, g: mat.NewSymDense(m, gd), b: make([]float64, m)}
	if len(bounds) < 2 {
		bounds = []int{0, samples}
	}
	var parts []blas64.Symmetric
	for f := 0; f+1 < len(bounds); f++ {
		lo, hi := bounds[f], bounds[f+1]
		bg, bb, err := jacobian.Gram(ctx, g, x.Slice(lo, hi, 0, cols), e[lo*k:hi*k], gramBuffers.Get(m*m))
		if err != nil {
			return nil, fmt.Errorf("gram: %w", err)
		}
		if bg.SymmetricDim() != m || len(bb) != m {
			return nil, fmt.Errorf("gram: backend returned %d x %d and %d values for %d parameters", bg.SymmetricDim(), bg.SymmetricDim(), len(bb), m)
		}
		addUpper(pm.g.RawSymmetric(), bg.RawSymmetric())
		floats.Add(pm.b, bb)
		parts = append(parts, bg.RawSymmetric())
		pm.blocks = append(pm.blocks, primalBlock{lo: lo, hi: hi, b: bb})
	}
	if len(pm.blocks) == 1 {
		gramBuffers.Put(parts[0].Data)
		pm.blocks = nil // no folds: only the totals are used
	}
	// Each fold's G - G_fold over G_fold's upper triangle, row by row,
	// then mirrored; b - b_fold over b_fold.
	tot := pm.g.RawSymmetric()
	for i := range pm.blocks {
		blk := &pm.blocks[i]
		part := parts[i]
		for r := 0; r < m; r++ {
			t := tot.Data[r*tot.Stride+r : r*tot.Stride+m]
			floats.SubTo(part.Data[r*part.Stride+r:r*part.Stride+m], t, part.Data[r*part.Stride+r:r*part.Stride+m])
		}
		blk.g = blas64.General{Rows: m, Cols: m, Stride: part.Stride, Data: part.Data}
		linalg.MirrorUpper(blk.g.Data, m, blk.g.Stride)
		floats.SubTo(blk.b, pm.b, blk.b)
	}
	return pm, nil
}

func (p *primal) meanDiag() float64 {
	m := p.g.SymmetricDim()
	t := 0.0
	for i := 0; i < m; i++ {
		t += p.g.At(i, i)
	}
	return t / float64(p.rows)
}

func (p *primal) solveAll(ctx context.Context, alpha float64) (framework.Shift, error) {
	dtheta, err := shiftedSolve(ctx, upperOp{p.g.RawSymmetric()}, p.g, alpha, p.b)
	return framework.Shift{DTheta: dtheta}, err
}

func (p *primal) fold(_ context.Context, lo, hi int) (foldSolver, error) {
	_, cols := p.x.Dims()
	xH := p.x.Slice(lo, hi, 0, cols).(*mat.Dense)
	i := slices.IndexFunc(p.blocks, func(b primalBlock) bool { return b.lo == lo && b.hi == hi })
	if i < 0 {
		return nil, fmt.Errorf("no fold of samples %d..%d among the blocks the Gram was formed by", lo, hi)
	}
	kr := newKrylov(fullOp{p.blocks[i].g}, p.blocks[i].b)
	return func(ctx context.Context, alphas []float64) ([]*framework.Shift, error) {
		before := kr.flops
		dthetas, usable, err := kr.solveMany(ctx, alphas)
		timing.From(ctx).Add(stageSearch, 0, kr.flops-before)
		if err != nil {
			return nil, err
		}
		shifts := make([]*framework.Shift, len(alphas))
		for c := range alphas {
			if usable[c] {
				shifts[c] = &framework.Shift{X: xH, DTheta: dthetas.RawRowView(c)}
			}
		}
		return shifts, nil
	}, nil
}

// addUpper adds the upper triangle of b to a's, row by row (gonum's
// SymDense.AddSym goes element by element).
func addUpper(a, b blas64.Symmetric) {
	for r := 0; r < a.N; r++ {
		floats.Add(a.Data[r*a.Stride+r:r*a.Stride+a.N], b.Data[r*b.Stride+r:r*b.Stride+b.N])
	}
}

// choleskySolve solves (A + alpha I) x = r. A system that is positive
// definite but ill-conditioned (gonum's mat.Condition: condition number
// above 1e16, as when a dropped feature's zero gradients meet a tiny
// penalty) is solved all the same: Cholesky is backward stable, so its
// solution's backward error is of order n eps whatever the condition,
// which is how the Krylov solves are judged too (krylovTol); only its
// forward error may be large, in directions the ridge regression leaves
// undetermined.
func choleskySolve(a *mat.SymDense, alpha float64, r []float64) ([]float64, error) {
	n := a.SymmetricDim()
	s := mat.NewSymDense(n, nil)
	s.CopySym(a)
	for i := 0; i < n; i++ {
		s.SetSym(i, i, s.At(i, i)+alpha)
	}
	var ch mat.Cholesky
	if !ch.Factorize(s) {
		return nil, fmt.Errorf("%w: the %d x %d system at alpha %g is not positive definite", errSingular, n, n, alpha)
	}
	x := mat.NewVecDense(n, nil)
	if err := ch.SolveVecTo(x, mat.NewVecDense(n, r)); err != nil {
		var cond mat.Condition
		if !errors.As(err, &cond) {
			return nil, fmt.Errorf("ridge solve: %w", err)
		}
	}
	out := x.RawVector().Data
	for _, v := range out {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%w: the %d x %d system at alpha %g has no finite solution", errSingular, n, n, alpha)
		}
	}
	return out, nil
}

// symmetrize replaces the square k by its symmetric part (k + k^T) / 2, in
// place (k is the caller's to give up), and returns its storage with both
// triangles; where k32 is not nil, it gets the same values rounded to
// float32, laid out as the storage, in the same pass.
func symmetrize(k *mat.Dense, k32 []float32) blas64.General {
	n, _ := k.Dims()
	raw := k.RawMatrix()
	if raw.Stride != n {
		raw = mat.DenseCopyOf(k).RawMatrix()
	}
	linalg.SymmetrizeSquare32(raw.Data, n, n, k32)
	return raw
}

// lapackImpl is the LAPACK the lazy solver calls (see internal/linalg).
var lapackImpl = linalg.LAPACK
