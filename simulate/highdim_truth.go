package simulate

import (
	"context"
	"math"
	"sync"
)

// highDimTruthRows is the Monte Carlo sample size of HighDimTruth: its
// standard errors are under 1% of the important features' VIs and 0.005
// for the others (TestHighDimTruth checks a fifth of the rows against
// twice these).
const highDimTruthRows = 100000

var highDimTruths sync.Map // rho -> []float64

// HighDimTruth returns the high-dimensional setting's true VIs under mse
// for Corr(x1, x2) = rho: VI_j = E[(f(x) - E[f(x) | x_-j])^2], f(x) =
// V relu(W x) the setting's network. Given x_-j, x_j is normal (mean
// rho x_2, variance 1 - rho^2 for x1, and the same for x2 with x1; standard
// for the others), so each unit's conditional mean has the closed form
// E[relu(c + d Z)] = c Phi(c/|d|) + |d| phi(c/|d|); the outer expectation
// is a Monte Carlo average over highDimTruthRows draws of x from a fixed
// seed. The "null" features x6..x100 carry weights N(0, HighDimSigma^2),
// not zero, and so a small VI of their own. The result is computed once
// per rho and shared; the caller must not change it. The first call for a
// rho takes a few seconds and returns ctx's error as soon as ctx is done.
func HighDimTruth(ctx context.Context, rho float64) ([]float64, error) {
	if v, ok := highDimTruths.Load(rho); ok {
		return v.([]float64), nil
	}
	out, _, err := highDimTruthMC(ctx, rho, highDimTruthRows, 0x5eed)
	if err != nil {
		return nil, err
	}
	v, _ := highDimTruths.LoadOrStore(rho, out)
	return v.([]float64), nil
}

// highDimTruthMC is HighDimTruth on n draws from seed, with each VI's
// Monte Carlo standard error; it looks at ctx every truthCheckRows draws.
func highDimTruthMC(ctx context.Context, rho float64, n int, seed int64) (vi, se []float64, err error) {
	const p, m = HighDimP, HighDimHidden
	w, v := HighDimNetwork()
	rng := newRand(seed)
	sum := make([]float64, p)
	sumSq := make([]float64, p)
	x := make([]float64, p)
	h := make([]float64, m)
	for i := range n {
		if i%truthCheckRows == 0 && ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		correlated(rng, x, rho)
		f := 0.0
		for k := range m {
			h[k] = 0
			for j, wkj := range w.RawRowView(k) {
				h[k] += wkj * x[j]
			}
			f += v[k] * math.Max(h[k], 0)
		}
		for j := range p {
			mu, sd := 0.0, 1.0
			switch j {
			case 0:
				mu, sd = rho*x[1], math.Sqrt(1-rho*rho)
			case 1:
				mu, sd = rho*x[0], math.Sqrt(1-rho*rho)
			}
			g := 0.0
			for k := range m {
				wkj := w.At(k, j)
				g += v[k] * reluMean(h[k]-wkj*x[j]+wkj*mu, math.Abs(wkj)*sd)
			}
			d := (f - g) * (f - g)
			sum[j] += d
			sumSq[j] += d * d
		}
	}
	vi, se = make([]float64, p), make([]float64, p)
	for j := range p {
		mean := sum[j] / float64(n)
		vi[j] = mean
		se[j] = math.Sqrt(math.Max(sumSq[j]/float64(n)-mean*mean, 0) / float64(n))
	}
	return vi, se, nil
}

// truthCheckRows is how many Monte Carlo draws highDimTruthMC makes between
// looks at its context (about a hundredth of a second's work).
const truthCheckRows = 512

// reluMean is E[max(c + d Z, 0)] for Z standard normal and d >= 0.
func reluMean(c, d float64) float64 {
	if d == 0 {
		return math.Max(c, 0)
	}
	t := c / d
	return c*0.5*math.Erfc(-t/math.Sqrt2) + d*math.Exp(-t*t/2)/math.Sqrt(2*math.Pi)
}
