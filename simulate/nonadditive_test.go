package simulate

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
)

// checkMC compares the Monte Carlo mean of d with want within 4.5 standard
// errors.
func checkMC(t *testing.T, what string, d []float64, want float64) {
	t.Helper()
	m, sd := stat.MeanStdDev(d, nil)
	se := sd / math.Sqrt(float64(len(d)))
	t.Logf("%s: %.4f (se %.4f), truth %.4f", what, m, se, want)
	if math.Abs(m-want) > 4.5*se {
		t.Errorf("%s: Monte Carlo %.4f (se %.4f), truth %.4f", what, m, se, want)
	}
}

// TestFriedman1Truth checks the quadrature against Monte Carlo: for x1,
// the mean of 100 (sin(pi a b) - E_a sin(pi a b))² over draws of (a, b),
// the inner mean by a 400-point midpoint rule rather than the closed form;
// for x3, x4 and x5 the squared deviation of their terms from their means.
func TestFriedman1Truth(t *testing.T) {
	truth := Friedman1Truth()
	rng := rand.New(rand.NewPCG(5, 6))
	const n, grid = 20000, 400
	d1, d3, d4, d5 := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range n {
		a, b, u := rng.Float64(), rng.Float64(), rng.Float64()
		var inner float64
		for k := range grid {
			inner += math.Sin(math.Pi * (float64(k) + 0.5) / grid * b)
		}
		inner /= grid
		r := 10 * (math.Sin(math.Pi*a*b) - inner)
		d1[i] = r * r
		q := 20*(u-0.5)*(u-0.5) - 20.0/12
		d3[i] = q * q
		d4[i] = 100 * (u - 0.5) * (u - 0.5)
		d5[i] = 25 * (u - 0.5) * (u - 0.5)
	}
	checkMC(t, "friedman1 x1", d1, truth[0])
	checkMC(t, "friedman1 x3", d3, truth[2])
	checkMC(t, "friedman1 x4", d4, truth[3])
	checkMC(t, "friedman1 x5", d5, truth[4])
	if truth[1] != truth[0] || truth[5]+truth[6]+truth[7]+truth[8]+truth[9] != 0 {
		t.Errorf("truth %v: want x2 = x1 and x6..x10 = 0", truth)
	}
}

// TestFriedman1Data: features on [0, 1], the response the formula plus
// noise of variance 1.
func TestFriedman1Data(t *testing.T) {
	d, err := Friedman1(20000, 3)
	if err != nil {
		t.Fatal(err)
	}
	noise := make([]float64, 20000)
	for i := range noise {
		r := d.X.RawRowView(i)
		for _, v := range r[:Friedman1P] {
			if v < 0 || v >= 1 {
				t.Fatalf("row %d: feature %v outside [0, 1)", i, v)
			}
		}
		noise[i] = r[Friedman1P] - (10*math.Sin(math.Pi*r[0]*r[1]) + 20*(r[2]-0.5)*(r[2]-0.5) + 10*r[3] + 5*r[4])
	}
	sq := make([]float64, len(noise))
	for i, e := range noise {
		sq[i] = e * e
	}
	checkMC(t, "friedman1 noise variance", sq, 1)
}

// TestInteractionTruth checks the truth by Monte Carlo on the generated
// data: dropping x1 costs E (2 x1 x2)², x3 E (1.5 x3 x4)², x5 E x5².
func TestInteractionTruth(t *testing.T) {
	d, err := Interaction(20000, 4)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := d.X.Dims()
	col := func(j int) []float64 { return mat.Col(nil, j, d.X) }
	x1, x2, x3, x4, x5, y := col(0), col(1), col(2), col(3), col(4), col(InteractionP)
	d1, d3, d5, e := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range n {
		d1[i] = 4 * x1[i] * x1[i] * x2[i] * x2[i]
		d3[i] = 2.25 * x3[i] * x3[i] * x4[i] * x4[i]
		d5[i] = x5[i] * x5[i]
		r := y[i] - (2*x1[i]*x2[i] + 1.5*x3[i]*x4[i] + x5[i])
		e[i] = r * r
	}
	checkMC(t, "interaction x1", d1, d.Truth[0])
	checkMC(t, "interaction x3", d3, d.Truth[2])
	checkMC(t, "interaction x5", d5, d.Truth[4])
	checkMC(t, "interaction noise variance", e, NoiseVar)
}
