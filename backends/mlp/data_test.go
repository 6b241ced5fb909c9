package mlp

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
)

// linearData draws the paper's linear setting (section 5.1): x ~ N(0, Sigma)
// with p columns, unit variances, Corr(x1, x2) = rho and the rest
// independent, and y = 1.5 x1 + 1.2 x2 + x3 + N(0, noiseVar).
func linearData(rng *rand.Rand, n, p int, rho, noiseVar float64) (*mat.Dense, []float64) {
	x := mat.NewDense(n, p, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		for j := 0; j < p; j++ {
			x.Set(i, j, rng.NormFloat64())
		}
		x.Set(i, 1, rho*x.At(i, 0)+math.Sqrt(1-rho*rho)*x.At(i, 1))
		y[i] = 1.5*x.At(i, 0) + 1.2*x.At(i, 1) + x.At(i, 2) + math.Sqrt(noiseVar)*rng.NormFloat64()
	}
	return x, y
}

// probitData draws the paper's binary setting (section 5.2): x ~ N(0, I_p),
// P(Y = 1 | x) = Phi(beta . x). It returns the true probabilities too.
func probitData(rng *rand.Rand, n, p int, beta []float64) (x *mat.Dense, y, prob []float64) {
	x = mat.NewDense(n, p, nil)
	y = make([]float64, n)
	prob = make([]float64, n)
	for i := 0; i < n; i++ {
		var eta float64
		for j := 0; j < p; j++ {
			v := rng.NormFloat64()
			x.Set(i, j, v)
			if j < len(beta) {
				eta += beta[j] * v
			}
		}
		prob[i] = 0.5 * math.Erfc(-eta/math.Sqrt2)
		if rng.Float64() < prob[i] {
			y[i] = 1
		}
	}
	return x, y, prob
}

// standardise scales the columns of train to mean 0, sd 1 with train's
// statistics and applies the same map to the others, as the framework does.
func standardise(train *mat.Dense, others ...*mat.Dense) {
	n, p := train.Dims()
	for j := 0; j < p; j++ {
		var s, ss float64
		for i := 0; i < n; i++ {
			s += train.At(i, j)
		}
		mu := s / float64(n)
		for i := 0; i < n; i++ {
			d := train.At(i, j) - mu
			ss += d * d
		}
		sd := math.Sqrt(ss / float64(n))
		for _, m := range append([]*mat.Dense{train}, others...) {
			r, _ := m.Dims()
			for i := 0; i < r; i++ {
				m.Set(i, j, (m.At(i, j)-mu)/sd)
			}
		}
	}
}

// fitModel builds and fits a model, failing the test on error; a
// multiclass model has productClasses classes.
func fitModel(tb testing.TB, task framework.Task, x *mat.Dense, y []float64, seed int64, opts map[string]string) *Model {
	tb.Helper()
	_, p := x.Dims()
	spec := framework.ModelSpec{Task: task, Inputs: p, Seed: seed, Options: opts}
	if task == framework.Multiclass {
		spec.Classes = productClasses
	}
	md, err := NewModel(spec)
	if err != nil {
		tb.Fatalf("NewModel: %v", err)
	}
	if err := md.Fit(context.Background(), x, y); err != nil {
		tb.Fatalf("Fit: %v", err)
	}
	return md
}

// smallProblem is a small fitted network for the exactness tests: a few
// epochs, so that the parameters are away from their initialisation, on a
// response with mean and scale far from 0 and 1, so that mu and sd matter.
func smallProblem(tb testing.TB, task framework.Task, hidden string, n int) (*Model, *mat.Dense) {
	tb.Helper()
	rng := rand.New(rand.NewPCG(7, 11))
	var x *mat.Dense
	var y []float64
	switch task {
	case framework.Binary:
		x, y, _ = probitData(rng, n, 3, []float64{1, -2})
	case framework.Multiclass:
		x, y = classData(rng, n)
	default:
		x, y = linearData(rng, n, 3, 0.5, 0.1)
		for i := range y {
			y[i] = 10*y[i] + 3
		}
	}
	md := fitModel(tb, task, x, y, 1, map[string]string{"hidden": hidden, "epochs": "20", "batch": "16"})
	return md, x
}

func maxAbs(s []float64) float64 {
	var m float64
	for _, v := range s {
		m = math.Max(m, math.Abs(v))
	}
	return m
}

// productClasses is the number of classes of smallProblem's multiclass
// response: 3, so that a kernel block of 256 stacked rows ends inside a
// sample's rows.
const productClasses = 3

// classData draws n rows of 3 standard normal columns and a class label in
// 0..productClasses-1: the highest of x1, x2 - x1 and -x2 plus N(0, 0.25).
func classData(rng *rand.Rand, n int) (*mat.Dense, []float64) {
	x := mat.NewDense(n, 3, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		for j := 0; j < 3; j++ {
			x.Set(i, j, rng.NormFloat64())
		}
		s := []float64{x.At(i, 0), x.At(i, 1) - x.At(i, 0), -x.At(i, 1)}
		for k := range s {
			s[k] += 0.5 * rng.NormFloat64()
			if s[k] > s[int(y[i])] {
				y[i] = float64(k)
			}
		}
	}
	return x, y
}
