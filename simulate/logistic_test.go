package simulate

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/stat"
)

func TestLogistic(t *testing.T) {
	const n = 20000
	d, err := Logistic(n, LogisticRho, 3)
	if err != nil {
		t.Fatal(err)
	}
	r, c := d.X.Dims()
	if r != n || c != LogisticP+1 || len(d.Names) != c || d.Names[c-1] != "y" || d.Setting != "logistic" {
		t.Fatalf("dims %dx%d, names %d, setting %q", r, c, len(d.Names), d.Setting)
	}
	x1, x2, x3 := make([]float64, n), make([]float64, n), make([]float64, n)
	y := make([]float64, n)
	for i := range n {
		x1[i], x2[i], x3[i], y[i] = d.X.At(i, 0), d.X.At(i, 1), d.X.At(i, 2), d.X.At(i, LogisticP)
		if y[i] != 0 && y[i] != 1 {
			t.Fatalf("row %d: y = %v", i, y[i])
		}
	}
	// Corr(x1, x2) = 0.75 and Corr(x1, x3) = 0 within 4 standard errors
	// (about (1-rho²)/sqrt(n) and 1/sqrt(n)).
	if c := stat.Correlation(x1, x2, nil); math.Abs(c-LogisticRho) > 4*(1-LogisticRho*LogisticRho)/math.Sqrt(n) {
		t.Errorf("Corr(x1, x2) = %v, want %v", c, LogisticRho)
	}
	if c := stat.Correlation(x1, x3, nil); math.Abs(c) > 4/math.Sqrt(n) {
		t.Errorf("Corr(x1, x3) = %v, want 0", c)
	}
	// By symmetry of x'beta around 0, P(y = 1) = 1/2.
	if m := stat.Mean(y, nil); math.Abs(m-0.5) > 4*0.5/math.Sqrt(n) {
		t.Errorf("mean y = %v, want 0.5", m)
	}
	// E[y x1] = E[x1 sigmoid(eta)] > 0 and E[y x6] = 0.
	var m1, m6 float64
	for i := range n {
		m1 += (y[i] - 0.5) * x1[i]
		m6 += (y[i] - 0.5) * d.X.At(i, 5)
	}
	if m6/n > 4*0.5/math.Sqrt(n) || m6/n < -4*0.5/math.Sqrt(n) {
		t.Errorf("E[(y-1/2) x6] = %v, want 0", m6/n)
	}
	if m1/n < 0.1 {
		t.Errorf("E[(y-1/2) x1] = %v, want clearly positive", m1/n)
	}
	again, _ := Logistic(50, LogisticRho, 3)
	for i := range 50 {
		for j := range LogisticP + 1 {
			if again.X.At(i, j) != d.X.At(i, j) {
				t.Fatalf("seed 3 not reproducible at (%d, %d)", i, j)
			}
		}
	}
	if _, err := Logistic(0, 0.5, 1); err == nil {
		t.Error("n = 0: no error")
	}
}
