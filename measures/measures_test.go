package measures

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/lazyvi/lazyvi/framework"
)

func col(v ...float64) *mat.Dense { return mat.NewDense(len(v), 1, v) }

func TestHandComputed(t *testing.T) {
	cases := []struct {
		m     framework.Measure
		y     []float64
		pred  []float64
		value float64
		inf   []float64
	}{
		// y = (1,2,3), f = (1,1,5): r^2 = (0,1,4), MSE = 5/3;
		// IF_i = MSE - r_i^2 = (5/3, 2/3, -7/3).
		{MSE(), []float64{1, 2, 3}, []float64{1, 1, 5}, -5.0 / 3, []float64{5.0 / 3, 2.0 / 3, -7.0 / 3}},
		// Same vectors: ybar = 2, (y - ybar)^2 = (1,0,1), Var = 2/3,
		// R2 = 1 - (5/3)/(2/3) = -1.5.
		// IF_1 = -[(0-5/3)/(2/3) - (5/3)(1-2/3)/(4/9)] = -[-2.5 - 1.25] = 3.75
		// IF_2 = -[(1-5/3)/(2/3) - (5/3)(0-2/3)/(4/9)] = -[-1 + 2.5] = -1.5
		// IF_3 = -[(4-5/3)/(2/3) - 1.25] = -[3.5 - 1.25] = -2.25
		{R2(), []float64{1, 2, 3}, []float64{1, 1, 5}, -1.5, []float64{3.75, -1.5, -2.25}},
		// y = (0,2,4), f = (1,2,3): Var = 8/3, MSE = 2/3, R2 = 0.75; r_i^2 is
		// proportional to (y_i - ybar)^2 here, so every IF_i is 0.
		{R2(), []float64{0, 2, 4}, []float64{1, 2, 3}, 0.75, []float64{0, 0, 0}},
		// Classes (1,0,0,0) (0.5 is a tie and goes to 0) vs y = (1,0,1,0):
		// correct = (1,1,0,1), acc = 0.75, IF = correct - 0.75.
		{Accuracy(), []float64{1, 0, 1, 0}, []float64{0.9, 0.2, 0.4, 0.5}, 0.75, []float64{0.25, 0.25, -0.75, 0.25}},
		// l = (-ln 0.8, -ln 0.6) = (0.2231435513, 0.5108256238),
		// mean 0.3669845875; IF = mean - l = (0.1438410362, -0.1438410362).
		{LogLoss(), []float64{1, 0}, []float64{0.8, 0.4}, -0.3669845875, []float64{0.1438410362, -0.1438410362}},
		// Clipping: p = 0 for y = 1 costs -ln(1e-15) = 34.53877639; p = 0 for
		// y = 0 costs -ln(1 - 1e-15) ~ 1e-15. Mean 17.2693882.
		{LogLoss(), []float64{1, 0}, []float64{0, 0}, -17.269388197, []float64{-17.269388197, 17.269388197}},
	}
	for i, c := range cases {
		s, err := c.m.Evaluate(c.y, col(c.pred...))
		if err != nil {
			t.Fatalf("Case %d (%s): %v", i, c.m.Name(), err)
		}
		if !scalar.EqualWithinAbsOrRel(s.Value, c.value, 1e-9, 1e-9) {
			t.Errorf("Case %d (%s): want value %v, got %v", i, c.m.Name(), c.value, s.Value)
		}
		for k := range c.inf {
			if !scalar.EqualWithinAbsOrRel(s.Influence[k], c.inf[k], 1e-9, 1e-9) {
				t.Errorf("Case %d (%s): want influence %v, got %v", i, c.m.Name(), c.inf, s.Influence)
				break
			}
		}
	}
}

func TestRegistered(t *testing.T) {
	want := map[string]framework.Task{"mse": framework.Regression, "r2": framework.Regression, "accuracy": framework.Binary, "logloss": framework.Binary}
	for name, task := range want {
		m, err := framework.LookupMeasure(name)
		if err != nil {
			t.Fatalf("LookupMeasure(%q): %v", name, err)
		}
		if m.Name() != name {
			t.Errorf("measure %q has Name %q", name, m.Name())
		}
		other := framework.Binary
		if task == framework.Binary {
			other = framework.Regression
		}
		if !m.Supports(task) || m.Supports(other) {
			t.Errorf("%s: Supports(%v) = %t, Supports(%v) = %t", name, task, m.Supports(task), other, m.Supports(other))
		}
	}
}

func TestErrors(t *testing.T) {
	cases := []struct {
		m     framework.Measure
		y     []float64
		pred  mat.Matrix
		want  string
		usage bool
	}{
		{MSE(), []float64{1, 2}, col(1, 2, 3), "3 predictions for 2 responses", false},
		{MSE(), []float64{1, 2}, mat.NewDense(2, 2, nil), "2 x 2, want 2 x 1", false},
		{MSE(), []float64{}, mat.NewDense(1, 1, nil), "1 predictions for 0 responses", false},
		{MSE(), []float64{1, 2}, col(1, math.NaN()), "prediction 1 is NaN", false},
		{R2(), []float64{2, 2}, col(1, 2), "constant", true},
		{Accuracy(), []float64{1, 0}, col(0.5, 1.5), "not a probability", false},
		{LogLoss(), []float64{1, 0}, col(-0.1, 0.5), "not a probability", false},
		{Accuracy(), []float64{1, 2}, col(0.5, 0.5), "must be 0 or 1", true},
	}
	for i, c := range cases {
		_, err := c.m.Evaluate(c.y, c.pred)
		if err == nil {
			t.Errorf("Case %d (%s): want error containing %q, got nil", i, c.m.Name(), c.want)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("Case %d (%s): want error containing %q, got %q", i, c.m.Name(), c.want, err)
		}
		if errors.Is(err, framework.ErrUsage) != c.usage {
			t.Errorf("Case %d (%s): errors.Is(err, ErrUsage) = %t, want %t", i, c.m.Name(), !c.usage, c.usage)
		}
	}
}

func TestInputsUnchanged(t *testing.T) {
	y := []float64{1, 0, 1}
	p := col(0.3, 0.6, 0.9)
	yc := append([]float64(nil), y...)
	pc := mat.DenseCopyOf(p)
	for _, m := range []framework.Measure{MSE(), R2(), Accuracy(), LogLoss()} {
		if _, err := m.Evaluate(y, p); err != nil {
			t.Fatal(err)
		}
	}
	if !floatsEqual(y, yc) || !mat.Equal(p, pc) {
		t.Error("Evaluate modified its inputs")
	}
}

func floatsEqual(a, b []float64) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}

// r2Weighted is R² of the weighted empirical distribution (weights sum to 1).
func r2Weighted(y, f, w []float64) float64 {
	var ybar float64
	for i := range y {
		ybar += w[i] * y[i]
	}
	var m, v float64
	for i := range y {
		m += w[i] * (y[i] - f[i]) * (y[i] - f[i])
		v += w[i] * (y[i] - ybar) * (y[i] - ybar)
	}
	return 1 - m/v
}

// TestR2InfluenceIsGateauxDerivative checks the delta-method formula against
// its definition, IF_i = d/de R2((1-e) P_n + e delta_i) at e = 0, by central
// differences.
func TestR2InfluenceIsGateauxDerivative(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	n := 7
	y := make([]float64, n)
	f := make([]float64, n)
	for i := range y {
		y[i] = rng.NormFloat64()
		f[i] = 0.5*y[i] + 0.3*rng.NormFloat64()
	}
	s, err := R2().Evaluate(y, col(f...))
	if err != nil {
		t.Fatal(err)
	}
	const h = 1e-6
	w := make([]float64, n)
	for i := range n {
		at := func(e float64) float64 {
			for k := range w {
				w[k] = (1 - e) / float64(n)
			}
			w[i] += e
			return r2Weighted(y, f, w)
		}
		num := (at(h) - at(-h)) / (2 * h)
		if !scalar.EqualWithinAbsOrRel(num, s.Influence[i], 1e-6, 1e-6) {
			t.Errorf("sample %d: want IF %v (numerical), got %v", i, num, s.Influence[i])
		}
	}
}

// TestR2StandardErrorMonteCarlo checks that sd(IF_full - IF_red)/sqrt(n)
// estimates the sampling sd of R2(full) - R2(reduced). Data: y = x1 + x2 + e,
// all standard normal; full = x1 + x2, reduced = E[y | x1] = x1.
func TestR2StandardErrorMonteCarlo(t *testing.T) {
	if testing.Short() {
		t.Skip("Monte Carlo")
	}
	const (
		n    = 400
		reps = 2000
	)
	rng := rand.New(rand.NewPCG(20240601, 7))
	vi := make([]float64, reps)
	ses := make([]float64, reps)
	y := make([]float64, n)
	full := mat.NewDense(n, 1, nil)
	red := mat.NewDense(n, 1, nil)
	d := make([]float64, n)
	for r := range reps {
		for i := range n {
			x1, x2 := rng.NormFloat64(), rng.NormFloat64()
			y[i] = x1 + x2 + rng.NormFloat64()
			full.Set(i, 0, x1+x2)
			red.Set(i, 0, x1)
		}
		sf, err := R2().Evaluate(y, full)
		if err != nil {
			t.Fatal(err)
		}
		sr, err := R2().Evaluate(y, red)
		if err != nil {
			t.Fatal(err)
		}
		vi[r] = sf.Value - sr.Value
		for i := range d {
			d[i] = sf.Influence[i] - sr.Influence[i]
		}
		ses[r] = stat.StdDev(d, nil) / math.Sqrt(n)
	}
	empirical := stat.StdDev(vi, nil)
	predicted := math.Sqrt(stat.Mean(sq(ses), nil)) // root mean squared se
	// The sample sd of reps draws has relative standard error about
	// 1/sqrt(2(reps-1)) (~1.6% here); allow 4 of them, plus 1/n for the
	// delta method's finite-sample error.
	tol := 4/math.Sqrt(2*(reps-1)) + 1.0/n
	rel := math.Abs(predicted-empirical) / empirical
	t.Logf("r2 VI: mean %.4f, empirical sd %.5f, influence-function se %.5f (relative difference %.3f, tolerance %.3f)",
		stat.Mean(vi, nil), empirical, predicted, rel, tol)
	if rel > tol {
		t.Errorf("want influence-function se within %.3f of the empirical sd %v, got %v", tol, empirical, predicted)
	}
}

func sq(x []float64) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = v * v
	}
	return out
}

// TestLosses: mse and logloss are losses (their scores read as -Value),
// r2 and accuracy are not; LossOf writes the loss beside a score.
func TestLosses(t *testing.T) {
	for name, want := range map[string]bool{"mse": true, "logloss": true, "r2": false, "accuracy": false} {
		m, err := framework.LookupMeasure(name)
		if err != nil {
			t.Fatal(err)
		}
		if (framework.LossOf(m, 0) != nil) != want {
			t.Errorf("%s: loss %v, want %v", name, (framework.LossOf(m, 0) != nil), want)
		}
		l := framework.LossOf(m, -2.5)
		if want && (l == nil || *l != 2.5) || !want && l != nil {
			t.Errorf("%s: LossOf(-2.5) = %v", name, l)
		}
	}
}

// TestSignalVariance: mse's growth of the paired variance per unit of VI
// is 4 mean((y - f)^2), r2's that over Var(y) (divisor n), computed here
// by hand; and for y = f + e, a reduced model f - s h (h, e standard
// normal, VI s^2) has paired differences 2 s h e + s^2 h^2 whose variance,
// 4 s^2 + 2 s^4, grows from s = 0 by 4 (= 4 Var(e)) per unit of VI: the
// closed form the growth stands for, checked on a seeded sample within
// four standard errors.
func TestSignalVariance(t *testing.T) {
	y := []float64{1, 2, 4, 7}
	f := mat.NewDense(4, 1, []float64{1.5, 2, 3, 7.5})
	want := 4 * (0.25 + 0 + 1 + 0.25) / 4
	got, err := MSE().(framework.SignalVarianceReporter).SignalVariance(y, f)
	if err != nil || math.Abs(got-want) > 1e-12 {
		t.Errorf("mse: %v, %v; want %v", got, err, want)
	}
	vy := (2.5*2.5 + 1.5*1.5 + 0.5*0.5 + 3.5*3.5) / 4
	got, err = R2().(framework.SignalVarianceReporter).SignalVariance(y, f)
	if err != nil || math.Abs(got-want/vy) > 1e-12 {
		t.Errorf("r2: %v, %v; want %v", got, err, want/vy)
	}
	if _, ok := Accuracy().(framework.SignalVarianceReporter); ok {
		t.Error("accuracy says how its variance grows")
	}

	rng := rand.New(rand.NewPCG(31, 32))
	const n, s = 200000, 0.1
	yy, full, red := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range yy {
		e, h := rng.NormFloat64(), rng.NormFloat64()
		yy[i], full[i], red[i] = e, 0, s*h
	}
	fs, err := MSE().Evaluate(yy, mat.NewDense(n, 1, full))
	if err != nil {
		t.Fatal(err)
	}
	rs, err := MSE().Evaluate(yy, mat.NewDense(n, 1, red))
	if err != nil {
		t.Fatal(err)
	}
	d := make([]float64, n)
	for i := range d {
		d[i] = fs.Influence[i] - rs.Influence[i]
	}
	g, err := MSE().(framework.SignalVarianceReporter).SignalVariance(yy, mat.NewDense(n, 1, full))
	if err != nil {
		t.Fatal(err)
	}
	// Var(d) at VI s^2 against g s^2 + 2 s^4; Var(d)'s standard error
	// from d's fourth moment, sqrt((E d^4 - Var^2)/n), about
	// sqrt((144 - 16)/n) s^2 for d near 2 s h e.
	v := stat.Variance(d, nil)
	if tol := 4 * math.Sqrt(128.0/n) * s * s; math.Abs(v-(g*s*s+2*s*s*s*s)) > tol {
		t.Errorf("Var(d) %g at VI %g, want growth %g times VI plus %g, +- %g", v, s*s, g, 2*s*s*s*s, tol)
	}
}
