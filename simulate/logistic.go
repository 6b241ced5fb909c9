package simulate

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// LogisticP is the number of features of the logistic setting.
const LogisticP = 100

// LogisticRho is Corr(x1, x2) of the paper's Shapley experiment.
const LogisticRho = 0.75

// LogisticBeta returns the logistic setting's coefficients:
// (5, 4, 3, 2, 1, 0, ..., 0), LogisticP of them.
func LogisticBeta() []float64 {
	b := make([]float64, LogisticP)
	for j := range 5 {
		b[j] = float64(5 - j)
	}
	return b
}

// Logistic is the data of the paper's appendix on Shapley values: p = 100
// standard normal features, independent except Corr(x1, x2) = rho (the paper
// uses LogisticRho), and a 0/1 response with log(P(y=1)/P(y=0)) = x'beta,
// beta = LogisticBeta(). Truth is nil (the population Shapley values of
// accuracy have no closed form); the measure is accuracy.
func Logistic(n int, rho float64, seed int64) (*Data, error) {
	if err := check(n, LogisticP, rho); err != nil {
		return nil, err
	}
	const p = LogisticP
	beta := LogisticBeta()
	rng := newRand(seed)
	x := mat.NewDense(n, p+1, nil)
	for i := range n {
		row := x.RawRowView(i)
		correlated(rng, row[:p], rho)
		eta := 0.0
		for j, b := range beta[:5] {
			eta += b * row[j]
		}
		if rng.Float64() < 1/(1+math.Exp(-eta)) {
			row[p] = 1
		}
	}
	return &Data{Setting: "logistic", Names: names(p), X: x, Measure: "accuracy", Rho: rho, Seed: seed}, nil
}
