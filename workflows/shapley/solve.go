package shapley

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
)

// Game is the input of the constrained weighted least squares: the
// predictiveness of the intercept-only model (Empty), of the full model
// (Full) and of a reduced model per subset (Values[k] for Subsets[k]), with
// the subsets' weights (Weights[k] >= 0).
type Game struct {
	P       int
	Subsets []Subset
	Weights []float64
	Values  []float64
	Empty   float64
	Full    float64
}

// Fit is the solution of the constrained least squares and its derivatives.
type Fit struct {
	// Psi are the p Shapley values; they sum to Full - Empty.
	Psi []float64
	// Rank is the rank of the projected normal matrix U^T A U (p-1 when
	// every value is identified by the subsets).
	Rank int
	// dPsi/dValues[k] is CoefSubset[k] (length p each); dPsi/dFull is
	// CoefFull, dPsi/dEmpty is CoefEmpty.
	CoefSubset [][]float64
	CoefFull   []float64
	CoefEmpty  []float64
	// B = U (U^T A U)^+ U^T, p x p: the sampling influence of a draw of S is
	// B z_S (Values_S - Empty - z_S^T Psi).
	B *mat.Dense
}

// ErrNotIdentified reports subsets that leave some values undetermined.
var ErrNotIdentified = errors.New("shapley: the sampled subsets do not identify every Shapley value")

// Solve solves
//
//	minimise_psi  sum_k w_k (v_k - v_empty - z_k^T psi)^2   subject to   1^T psi = v_full - v_empty
//
// with z_k the 0/1 indicator of Subsets[k]: the SPVIM least squares of
// Williamson & Feng (2020) with the intercept psi_0 = v_empty substituted.
// Writing psi = (Delta/p) 1 + U u, U an orthonormal basis of the complement
// of 1 (columns 2..p of the Householder reflection that maps e_1 to
// -1/sqrt(p)), A = sum_k w_k z_k z_k^T and b = sum_k w_k z_k (v_k - v_empty),
//
//	psi = B b + (I - B A) 1 Delta/p,   B = U (U^T A U)^+ U^T,
//
// with the Moore-Penrose inverse (eigenvalues below 1e-10 times the largest
// are dropped, and Rank says how many were kept). psi is linear in
// (v_k, v_empty, v_full); Fit carries the coefficients.
func Solve(g Game) (*Fit, error) {
	p := g.P
	if p < 1 {
		return nil, fmt.Errorf("shapley: no features")
	}
	if len(g.Weights) != len(g.Subsets) || len(g.Values) != len(g.Subsets) {
		return nil, fmt.Errorf("shapley: %d subsets, %d weights, %d values", len(g.Subsets), len(g.Weights), len(g.Values))
	}
	delta := g.Full - g.Empty
	if p == 1 {
		return &Fit{Psi: []float64{delta}, Rank: 0, CoefSubset: make([][]float64, len(g.Subsets)),
			CoefFull: []float64{1}, CoefEmpty: []float64{-1}, B: mat.NewDense(1, 1, nil)}, nil
	}
	a := normalMatrix(g)
	bm, rank, err := restrictedPinv(a)
	if err != nil {
		return nil, err
	}

	// I - B A, times 1/p: the coefficient of Delta.
	var ba mat.Dense
	ba.Mul(bm, a)
	cDelta := make([]float64, p)
	for i := range p {
		s := 1.0
		for j := range p {
			s -= ba.At(i, j)
		}
		cDelta[i] = s / float64(p)
	}
	f := &Fit{Psi: make([]float64, p), Rank: rank, CoefSubset: make([][]float64, len(g.Subsets)),
		CoefFull: cDelta, CoefEmpty: make([]float64, p), B: bm}
	for i := range p {
		f.Psi[i] = cDelta[i] * delta
		f.CoefEmpty[i] = -cDelta[i]
	}
	for k, s := range g.Subsets {
		c := make([]float64, p)
		w := g.Weights[k]
		for i := range p {
			for _, j := range s {
				c[i] += bm.At(i, j) * w
			}
		}
		f.CoefSubset[k] = c
		d := g.Values[k] - g.Empty
		for i := range p {
			f.Psi[i] += c[i] * d
			f.CoefEmpty[i] -= c[i]
		}
	}
	if rank < p-1 {
		return f, fmt.Errorf("%w: rank %d of %d (draw more subsets)", ErrNotIdentified, rank, p-1)
	}
	return f, nil
}

// normalMatrix is A = sum_k w_k z_k z_k^T, z_k the indicator of
// Subsets[k].
func normalMatrix(g Game) *mat.SymDense {
	a := mat.NewSymDense(g.P, nil)
	for k, s := range g.Subsets {
		w := g.Weights[k]
		for _, i := range s {
			for _, j := range s {
				if j >= i {
					a.SetSym(i, j, a.At(i, j)+w)
				}
			}
		}
	}
	return a
}

// restrictedPinv is B = U (U^T A U)^+ U^T (p x p) for the p x p normal
// matrix a, U nullBasis(p), and the rank of U^T A U: its eigenvalues below
// 1e-10 times the largest are dropped.
func restrictedPinv(a *mat.SymDense) (*mat.Dense, int, error) {
	p := a.SymmetricDim()
	u := nullBasis(p) // p x (p-1)
	var ua mat.Dense
	ua.Mul(u.T(), a)
	var m mat.Dense
	m.Mul(&ua, u)
	ms := mat.NewSymDense(p-1, nil)
	for i := 0; i < p-1; i++ {
		for j := i; j < p-1; j++ {
			ms.SetSym(i, j, 0.5*(m.At(i, j)+m.At(j, i)))
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(ms, true) {
		return nil, 0, fmt.Errorf("shapley: eigendecomposition of the normal matrix failed")
	}
	vals := eig.Values(nil)
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	top := 0.0
	for _, v := range vals {
		top = math.Max(top, math.Abs(v))
	}
	pinv := mat.NewDense(p-1, p-1, nil)
	rank := 0
	for e, v := range vals {
		if !(v > 1e-10*top) {
			continue
		}
		rank++
		col := mat.Col(nil, e, &vecs)
		for i := range col {
			for j := range col {
				pinv.Set(i, j, pinv.At(i, j)+col[i]*col[j]/v)
			}
		}
	}
	var bm, tmp mat.Dense
	tmp.Mul(u, pinv)
	bm.Mul(&tmp, u.T())
	return &bm, rank, nil
}

// nullBasis returns p x (p-1) orthonormal columns orthogonal to the ones
// vector: columns 2..p of H = I - 2 h h^T / (h^T h), h = 1 + sqrt(p) e_1.
func nullBasis(p int) *mat.Dense {
	h := make([]float64, p)
	for i := range h {
		h[i] = 1
	}
	h[0] += math.Sqrt(float64(p))
	hh := 0.0
	for _, v := range h {
		hh += v * v
	}
	u := mat.NewDense(p, p-1, nil)
	for i := range p {
		for j := 1; j < p; j++ {
			v := -2 * h[i] * h[j] / hh
			if i == j {
				v++
			}
			u.Set(i, j-1, v)
		}
	}
	return u
}

// PairSamplingSE returns each value's subset-sampling standard error when
// the subsets of pairs (indices into g.Subsets: a sampled subset and its
// complement) were drawn from the kernel restricted to the sampled sizes,
// whose share of the kernel is 1 - mass. The least squares is a smooth
// function of the pairs' average, so to first order a pair moves psi by
//
//	zeta_i = (1 - mass) B (z_S r_S + z_Sc r_Sc) / 2,   r_S = v_S - v_empty - z_S^T psi,
//
// and se_j^2 = c var_i(zeta_ij) / N over the N pairs (Williamson and Feng
// 2020, Theorem 1, with a pair as the sampling unit). The residuals are
// in-sample; c = N / (N - h) with h = tr(B A_sampled), the leverage the
// sampled pairs have in the fit (p - 1 without enumerated sizes), corrects
// their spread as HC1 does. It returns zeros without pairs, and with fewer
// pairs than leverage (N <= h) it leaves c at 1.
func PairSamplingSE(g Game, f *Fit, pairs [][2]int, mass float64) []float64 {
	p := g.P
	out := make([]float64, p)
	n := len(pairs)
	if n == 0 {
		return out
	}
	scale := (1 - mass) / 2
	zeta := make([][]float64, n)
	bz := make([]float64, p)
	lev := 0.0
	for i, pr := range pairs {
		z := make([]float64, p)
		for _, k := range pr {
			s := g.Subsets[k]
			r := g.Values[k] - g.Empty
			for _, j := range s {
				r -= f.Psi[j]
			}
			for a := range p {
				bz[a] = 0
				for _, j := range s {
					bz[a] += f.B.At(a, j)
				}
				z[a] += scale * bz[a] * r
			}
			for _, j := range s {
				lev += bz[j]
			}
		}
		zeta[i] = z
	}
	h := lev * scale / float64(n) // tr(B A_sampled)
	c := 1.0
	if float64(n) > h {
		c = float64(n) / (float64(n) - h)
	}
	col := make([]float64, n)
	for j := range p {
		for i, z := range zeta {
			col[i] = z[j]
		}
		out[j] = math.Sqrt(c * varOf(col) / float64(n))
	}
	return out
}

// varOf is the sample variance (divisor n-1), 0 for fewer than two values.
func varOf(x []float64) float64 {
	if len(x) < 2 {
		return 0
	}
	return stat.Variance(x, nil)
}
