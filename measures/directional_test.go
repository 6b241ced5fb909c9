package measures

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/lazyvi/lazyvi/framework"
	"gonum.org/v1/gonum/mat"
)

// rowScores are each row's score, Value + Influence_i (a decomposable
// measure's per-row term).
func rowScores(t *testing.T, m framework.Measure, y []float64, pred mat.Matrix) []float64 {
	t.Helper()
	s, err := m.Evaluate(y, pred)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]float64, len(y))
	for i, v := range s.Influence {
		out[i] = s.Value + v
	}
	return out
}

// TestDirectionalFiniteDifference: each measure's Directional is the
// derivative of its rows' scores along its path from one model's
// predictions to another's, checked by a central difference with step
// 1e-5 (relative error below 1e-6) along the line between two models'
// predictions: mse's and logloss's (binary, and three classes) per row,
// r2's mean (its Value's derivative).
func TestDirectionalFiniteDifference(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 62))
	const n, h = 40, 1e-5
	yr, a, b := make([]float64, n), make([]float64, n), make([]float64, n)
	yb, pa, pb := make([]float64, n), make([]float64, n), make([]float64, n)
	yc := make([]float64, n)
	ca, cb := mat.NewDense(n, 3, nil), mat.NewDense(n, 3, nil)
	for i := range n {
		yr[i] = rng.NormFloat64()
		a[i], b[i] = yr[i]+0.5*rng.NormFloat64(), yr[i]+0.5*rng.NormFloat64()
		pa[i], pb[i] = 0.05+0.9*rng.Float64(), 0.05+0.9*rng.Float64()
		if rng.Float64() < pa[i] {
			yb[i] = 1
		}
		yc[i] = float64(i % 3)
		for _, m := range []*mat.Dense{ca, cb} {
			row := []float64{0.2 + rng.Float64(), 0.2 + rng.Float64(), 0.2 + rng.Float64()}
			s := row[0] + row[1] + row[2]
			for k := range row {
				m.Set(i, k, row[k]/s)
			}
		}
	}
	line := func(t0 float64) mat.Matrix {
		p := make([]float64, n)
		for i := range p {
			p[i] = a[i] + t0*(b[i]-a[i])
		}
		return col(p...)
	}
	probLine := func(t0 float64) mat.Matrix {
		p := make([]float64, n)
		for i := range p {
			p[i] = pa[i] + t0*(pb[i]-pa[i])
		}
		return col(p...)
	}
	classLine := func(t0 float64) mat.Matrix {
		var p mat.Dense
		p.Sub(cb, ca)
		p.Scale(t0, &p)
		p.Add(&p, ca)
		return &p
	}
	cases := []struct {
		name     string
		m        framework.Measure
		y        []float64
		path     func(float64) mat.Matrix
		meanOnly bool
	}{
		{"mse", MSE(), yr, line, false},
		{"r2", R2(), yr, line, true},
		{"logloss", LogLoss(), yb, probLine, false},
		{"logloss, 3 classes", LogLoss(), yc, classLine, false},
	}
	for _, c := range cases {
		got, err := c.m.(framework.Directional).Directional(c.y, c.path(0), c.path(1))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		up, down := rowScores(t, c.m, c.y, c.path(h)), rowScores(t, c.m, c.y, c.path(-h))
		if c.meanOnly {
			su, sd, sg := 0.0, 0.0, 0.0
			for i := range up {
				su, sd, sg = su+up[i]/n, sd+down[i]/n, sg+got[i]/n
			}
			up, down, got = []float64{su}, []float64{sd}, []float64{sg}
		}
		for i := range got {
			want := (up[i] - down[i]) / (2 * h)
			if math.Abs(got[i]-want) > 1e-6*math.Max(1, math.Abs(want)) {
				t.Errorf("%s, row %d: Directional %.9g, central difference %.9g", c.name, i, got[i], want)
			}
		}
	}
}

// TestDirectionalNotSmooth: accuracy and AUC have no derivative in the
// predictions and are not framework.Directional.
func TestDirectionalNotSmooth(t *testing.T) {
	for _, m := range []framework.Measure{Accuracy(), AUC()} {
		if _, ok := m.(framework.Directional); ok {
			t.Errorf("%s is Directional", m.Name())
		}
	}
}
