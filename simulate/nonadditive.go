package simulate

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/integrate/quad"
	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
)

// Friedman1P is the number of features of Friedman-1: five that enter the
// response and five that do not.
const Friedman1P = 10

// Friedman1 is Friedman's (1991) first benchmark: x ~ U[0, 1]^10 and
// y = 10 sin(pi x1 x2) + 20 (x3 - 0.5)² + 10 x4 + 5 x5 + eps, eps ~ N(0, 1).
// Truth is Friedman1Truth.
func Friedman1(n int, seed int64) (*Data, error) {
	if err := check(n, Friedman1P, 0); err != nil {
		return nil, err
	}
	x := independentRows(n, Friedman1P, seed, (*rand.Rand).Float64, 1, func(x []float64) float64 {
		return 10*math.Sin(math.Pi*x[0]*x[1]) + 20*(x[2]-0.5)*(x[2]-0.5) + 10*x[3] + 5*x[4]
	})
	return &Data{Setting: "friedman1", Names: names(Friedman1P), X: x, Measure: "mse", Seed: seed, Truth: Friedman1Truth()}, nil
}

// independentRows returns n rows of p independent features drawn by draw
// and, last, the response f(x) plus normal noise of standard deviation sd.
func independentRows(n, p int, seed int64, draw func(*rand.Rand) float64, sd float64, f func(x []float64) float64) *mat.Dense {
	rng := newRand(seed)
	x := mat.NewDense(n, p+1, nil)
	for i := range n {
		row := x.RawRowView(i)
		for j := range p {
			row[j] = draw(rng)
		}
		row[p] = f(row[:p]) + sd*rng.NormFloat64()
	}
	return x
}

// Friedman1Truth returns Friedman-1's MSE VIs. The features are
// independent, so dropping x_j costs E Var(f(X) | X_-j), which splits by
// the additive terms: 10 x4 gives 100/12, 5 x5 25/12, and 20 (x3 - 1/2)²
// gives 400 Var(u²) = 400 (1/80 - 1/144) = 20/9 for u ~ U[-1/2, 1/2]. For
// x1 (and x2 alike) it is 100 E_b[Var_a sin(pi a b)], a and b ~ U[0, 1],
// where E_a sin(pi a b) = (1 - cos(pi b))/(pi b) and E_a sin²(pi a b) =
// 1/2 - sin(2 pi b)/(4 pi b): a smooth integral over b, computed by
// 64-point Gauss-Legendre quadrature (exact to rounding).
func Friedman1Truth() []float64 {
	v := func(b float64) float64 {
		if b == 0 {
			return 0
		}
		m := (1 - math.Cos(math.Pi*b)) / (math.Pi * b)
		m2 := 0.5 - math.Sin(2*math.Pi*b)/(4*math.Pi*b)
		return m2 - m*m
	}
	x12 := 100 * quad.Fixed(v, 0, 1, 64, nil, 0)
	truth := make([]float64, Friedman1P)
	truth[0], truth[1], truth[2], truth[3], truth[4] = x12, x12, 20.0/9, 100.0/12, 25.0/12
	return truth
}

// InteractionP is the number of features of the interaction setting.
const InteractionP = 8

// Interaction is a nonadditive setting with low noise: x ~ N(0, I_8) and
// y = 2 x1 x2 + 1.5 x3 x4 + x5 + eps, eps ~ N(0, NoiseVar); x6..x8 do not
// enter. Dropping x1 leaves E[y | x_-1] = 1.5 x3 x4 + x5, whose extra error
// is E (2 x1 x2)² = 4; so the MSE VIs are (4, 4, 2.25, 2.25, 1, 0, 0, 0),
// and no additive model fits more than x5's share of the variance.
func Interaction(n int, seed int64) (*Data, error) {
	if err := check(n, InteractionP, 0); err != nil {
		return nil, err
	}
	x := independentRows(n, InteractionP, seed, (*rand.Rand).NormFloat64, math.Sqrt(NoiseVar), func(x []float64) float64 {
		return 2*x[0]*x[1] + 1.5*x[2]*x[3] + x[4]
	})
	return &Data{Setting: "interaction", Names: names(InteractionP), X: x, Measure: "mse", Seed: seed,
		Truth: []float64{4, 4, 2.25, 2.25, 1, 0, 0, 0}}, nil
}

// independent checks that rho is 0 for a setting with independent features.
func independent(setting string, rho float64) error {
	if rho != 0 {
		return framework.Usagef("setting %s has independent features; rho must be 0, not %v", setting, rho)
	}
	return nil
}
