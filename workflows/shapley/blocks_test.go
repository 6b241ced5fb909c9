package shapley

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/measures"
)

// A block design is a Gaussian linear model y = beta'x + eps with x made of
// independent blocks, each equicorrelated (Corr = rho within the block, unit
// variances): Var(E[y | x_S]) is the sum over blocks of the variance
// explained within each block, so the R² game is a sum of block games and
// its Shapley values are those of each block's game, computable by
// enumerating the block (closed form for any number of blocks).
type block struct {
	rho  float64
	beta []float64
}

type blockDesign struct {
	name   string
	blocks []block
	noise  float64 // Var(eps)
}

func (d blockDesign) p() int {
	p := 0
	for _, b := range d.blocks {
		p += len(b.beta)
	}
	return p
}

func (b block) sigma() *mat.SymDense {
	k := len(b.beta)
	s := mat.NewSymDense(k, nil)
	for i := range k {
		for j := i; j < k; j++ {
			v := b.rho
			if i == j {
				v = 1
			}
			s.SetSym(i, j, v)
		}
	}
	return s
}

// coef returns, for the block's features in mask, the coefficients of
// E[beta'x_b | x_T] (zero outside T).
func (b block) coef(mask uint32) []float64 { return condCoef(b.sigma(), b.beta, mask) }

// explained is Var(E[beta'x_b | x_T]).
func (b block) explained(mask uint32) float64 { return explainedVar(b.sigma(), b.beta, mask) }

// condCoef returns the coefficients gamma of E[beta'x | x_T] = gamma'x_T for
// x ~ N(0, sigma), T the features in mask: gamma_T = Sigma_TT^-1 Sigma_T.
// beta, zero outside T.
func condCoef(sigma *mat.SymDense, beta []float64, mask uint32) []float64 {
	k := len(beta)
	out := make([]float64, k)
	var idx []int
	for j := range k {
		if mask&(1<<j) != 0 {
			idx = append(idx, j)
		}
	}
	if len(idx) == 0 {
		return out
	}
	var sb mat.VecDense
	sb.MulVec(sigma, mat.NewVecDense(k, beta))
	ss := mat.NewSymDense(len(idx), nil)
	c := mat.NewVecDense(len(idx), nil)
	for a, i := range idx {
		c.SetVec(a, sb.AtVec(i))
		for bb, j := range idx {
			ss.SetSym(a, bb, sigma.At(i, j))
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(ss) {
		panic("covariance not positive definite")
	}
	var g mat.VecDense
	if err := ch.SolveVecTo(&g, c); err != nil {
		panic(err)
	}
	for a, i := range idx {
		out[i] = g.AtVec(a)
	}
	return out
}

// explainedVar is Var(E[beta'x | x_T]) = gamma_T' Sigma_T. beta.
func explainedVar(sigma *mat.SymDense, beta []float64, mask uint32) float64 {
	g := condCoef(sigma, beta, mask)
	var sb mat.VecDense
	sb.MulVec(sigma, mat.NewVecDense(len(beta), beta))
	return mat.Dot(mat.NewVecDense(len(g), g), &sb)
}

func (d blockDesign) varY() float64 {
	v := d.noise
	for _, b := range d.blocks {
		v += b.explained(1<<len(b.beta) - 1)
	}
	return v
}

// truth returns the population Shapley values of R²: within each block the
// Shapley values of its explained variance, divided by Var(y).
func (d blockDesign) truth() []float64 {
	vy := d.varY()
	var out []float64
	for _, b := range d.blocks {
		psi, err := Definition(len(b.beta), b.explained)
		if err != nil {
			panic(err)
		}
		for _, v := range psi {
			out = append(out, v/vy)
		}
	}
	return out
}

// sample draws n rows: the features, then y in the last column.
func (d blockDesign) sample(n int, seed int64) *mat.Dense {
	p := d.p()
	rng := rand.New(rand.NewPCG(uint64(seed), 0xb10c))
	x := mat.NewDense(n, p+1, nil)
	for i := range n {
		y := math.Sqrt(d.noise) * rng.NormFloat64()
		j := 0
		for _, b := range d.blocks {
			z0 := rng.NormFloat64()
			for _, beta := range b.beta {
				v := math.Sqrt(b.rho)*z0 + math.Sqrt(1-b.rho)*rng.NormFloat64()
				x.Set(i, j, v)
				y += beta * v
				j++
			}
		}
		x.Set(i, p, y)
	}
	return x
}

func (d blockDesign) dataset(n int, seed int64) *dataio.Dataset {
	p := d.p()
	names := make([]string, p+1)
	for j := range p {
		names[j] = fmt.Sprintf("x%d", j+1)
	}
	names[p] = "y"
	return &dataio.Dataset{Source: d.name, Names: names, X: d.sample(n, seed)}
}

// oracleGame is the R² game of the population reduced models
// E[y | x_S] scored on n sampled rows: the values carry the evaluation
// sample's noise and influence functions, as an estimate's do, but no model
// error. pred[b][mask] holds block b's prediction for its features in mask.
type oracleGame struct {
	d     blockDesign
	y     []float64
	pred  [][][]float64
	start []int // first player of each block
}

func newOracleGame(d blockDesign, n int, seed int64) *oracleGame {
	x := d.sample(n, seed)
	p := d.p()
	g := &oracleGame{d: d, y: mat.Col(nil, p, x)}
	j0 := 0
	for _, b := range d.blocks {
		k := len(b.beta)
		g.start = append(g.start, j0)
		masks := make([][]float64, 1<<k)
		for m := range masks {
			c := b.coef(uint32(m))
			f := make([]float64, n)
			for i := range n {
				for a, ca := range c {
					f[i] += ca * x.At(i, j0+a)
				}
			}
			masks[m] = f
		}
		g.pred = append(g.pred, masks)
		j0 += k
	}
	return g
}

// predict returns the prediction of the reduced model on s.
func (g *oracleGame) predict(s Subset) *mat.Dense {
	n := len(g.y)
	masks := make([]uint32, len(g.d.blocks))
	for _, j := range s {
		b := g.blockOf(j)
		masks[b] |= 1 << (j - g.start[b])
	}
	out := mat.NewDense(n, 1, nil)
	raw := out.RawMatrix().Data
	for b, m := range masks {
		for i, v := range g.pred[b][m] {
			raw[i] += v
		}
	}
	return out
}

func (g *oracleGame) blockOf(j int) int {
	b := len(g.start) - 1
	for g.start[b] > j {
		b--
	}
	return b
}

func (g *oracleGame) score(s Subset) framework.Score {
	sc, err := measures.R2().Evaluate(g.y, g.predict(s))
	if err != nil {
		panic(err)
	}
	return sc
}

// scorer scores subsets with the evaluation noise (noisy) or with the
// population values and no influence (noiseless).
func (g *oracleGame) scorer(noisy bool) scorer {
	return func(_ context.Context, subs []Subset, progress func(done, total int)) ([]framework.Score, error) {
		out := make([]framework.Score, len(subs))
		for k, s := range subs {
			if noisy {
				out[k] = g.score(s)
			} else {
				out[k] = framework.Score{Value: g.d.popR2(s), Influence: make([]float64, len(g.y))}
			}
		}
		return out, nil
	}
}

// popR2 is the population R² of E[y | x_S].
func (d blockDesign) popR2(s Subset) float64 {
	v := 0.0
	j0 := 0
	for _, b := range d.blocks {
		var m uint32
		for _, j := range s {
			if j >= j0 && j < j0+len(b.beta) {
				m |= 1 << (j - j0)
			}
		}
		v += b.explained(m)
		j0 += len(b.beta)
	}
	return v / d.varY()
}

// exact returns the Shapley values of the estimated game (every subset
// enumerated) without enumerating 2^p subsets: with V(S) = 1 - MSE(S)/Vy and
// the prediction a sum of block predictions P_b, V(S) is a constant plus
// block terms (2 mean(y P_b) - mean(P_b^2))/Vy and cross terms
// -2 mean(P_b P_b')/Vy, each depending on one block or two, so the Shapley
// values are sums of the Shapley values of games on one or two blocks.
func (g *oracleGame) exact() []float64 {
	n := float64(len(g.y))
	var vy, ybar float64
	for _, v := range g.y {
		ybar += v / n
	}
	for _, v := range g.y {
		vy += (v - ybar) * (v - ybar) / n
	}
	mean := func(a, b []float64) float64 {
		s := 0.0
		for i := range a {
			s += a[i] * b[i]
		}
		return s / n
	}
	p := g.d.p()
	psi := make([]float64, p)
	sizes := make([]int, len(g.d.blocks))
	for b, bl := range g.d.blocks {
		sizes[b] = len(bl.beta)
		f := func(m uint32) float64 {
			pb := g.pred[b][m]
			return (2*mean(g.y, pb) - mean(pb, pb)) / vy
		}
		v, _ := Definition(sizes[b], f)
		for a, x := range v {
			psi[g.start[b]+a] += x
		}
	}
	for b := range g.d.blocks {
		for c := b + 1; c < len(g.d.blocks); c++ {
			kb := sizes[b]
			f := func(m uint32) float64 {
				mb, mc := m&(1<<kb-1), m>>kb
				return -2 * mean(g.pred[b][mb], g.pred[c][mc]) / vy
			}
			v, _ := Definition(kb+sizes[c], f)
			for a, x := range v {
				if a < kb {
					psi[g.start[b]+a] += x
				} else {
					psi[g.start[c]+a-kb] += x
				}
			}
		}
	}
	return psi
}

// The designs of the tests and the study.
var (
	// design8: a correlated block of three (x3 without a coefficient) and
	// five independent features, two of them null.
	design8 = blockDesign{name: "p8", noise: 1, blocks: []block{
		{rho: 0.8, beta: []float64{1.5, 1, 0}},
		{beta: []float64{1}}, {beta: []float64{0.7}}, {beta: []float64{0.4}}, {beta: []float64{0}}, {beta: []float64{0}},
	}}
	// design20: four equicorrelated blocks of five.
	design20 = blockDesign{name: "p20", noise: 2, blocks: []block{
		{rho: 0.7, beta: []float64{1.2, 0.8, 0.4, 0, 0}},
		{rho: 0.5, beta: []float64{0.6, 0.6, 0, 0, 0}},
		{rho: 0.3, beta: []float64{1, 0, 0, 0, 0}},
		{rho: 0.8, beta: []float64{0, 0, 0, 0, 0}},
	}}
	// design50: ten blocks of five, three of them null.
	design50 = blockDesign{name: "p50", noise: 3, blocks: []block{
		{rho: 0.7, beta: []float64{1.2, 0.8, 0.4, 0, 0}},
		{rho: 0.5, beta: []float64{0.6, 0.6, 0, 0, 0}},
		{rho: 0.3, beta: []float64{1, 0, 0, 0, 0}},
		{rho: 0.8, beta: []float64{0, 0, 0, 0, 0}},
		{rho: 0.6, beta: []float64{0.5, 0.5, 0.5, 0.5, 0.5}},
		{rho: 0.2, beta: []float64{0.9, 0, 0, 0, 0.3}},
		{rho: 0.9, beta: []float64{0.7, -0.7, 0, 0, 0}},
		{rho: 0.4, beta: []float64{0, 0, 0, 0, 0}},
		{rho: 0.5, beta: []float64{0.3, 0.3, 0.3, 0, 0}},
		{rho: 0, beta: []float64{0, 0, 0, 0, 0}},
	}}
)
