package linear

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
)

var auto = map[string]string{"ridge": RidgeAuto}

// TestRidgeAutoShrinksNoise: on a response of pure noise with many inputs
// the cross-validated penalty is the grid's largest (every slope is
// noise); on a strong linear signal it is among the smallest (shrinkage
// only biases), and the tuned options say the penalty that Fit used.
func TestRidgeAutoShrinksNoise(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 4))
	n, p := 120, 30
	x := randX(rng, n, p)
	noise, signal := make([]float64, n), make([]float64, n)
	for i := range noise {
		noise[i] = rng.NormFloat64()
		signal[i] = x.At(i, 0) - 2*x.At(i, 1) + 0.1*rng.NormFloat64()
	}
	big := fit(t, framework.Regression, x, noise, auto)
	if want := float64(n) * math.Pow(10, ridgeGrid[len(ridgeGrid)-1]); big.cfg.ridge != want {
		t.Errorf("noise: ridge %g, want the grid's largest %g", big.cfg.ridge, want)
	}
	small := fit(t, framework.Regression, x, signal, auto)
	if lim := float64(n) * 1e-2; small.cfg.ridge > lim {
		t.Errorf("strong signal: ridge %g, want at most %g", small.cfg.ridge, lim)
	}
	got, err := strconv.ParseFloat(small.TunedOptions()["ridge"], 64)
	if err != nil || got != small.cfg.ridge {
		t.Errorf("tuned options %v, want ridge %g", small.TunedOptions(), small.cfg.ridge)
	}
	if o := fit(t, framework.Regression, x, signal, map[string]string{"ridge": "2"}).TunedOptions(); o != nil {
		t.Errorf("a fixed ridge: tuned options %v, want none", o)
	}
}

// TestRidgeAutoSeparated: separated classes, where logistic regression
// without a penalty has no finite optimum, fit with ridge auto (a positive
// penalty), and the choice is the same for the same seed and survives a
// save and load.
func TestRidgeAutoSeparated(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	n := 80
	x := randX(rng, n, 3)
	y := make([]float64, n)
	for i := range y {
		if x.At(i, 0) > 0 {
			y[i] = 1
		}
	}
	a := fit(t, framework.Binary, x, y, auto)
	b := fit(t, framework.Binary, x, y, auto)
	if !(a.cfg.ridge > 0) || a.cfg.ridge != b.cfg.ridge {
		t.Fatalf("ridges %g and %g: want the same positive penalty", a.cfg.ridge, b.cfg.ridge)
	}
	st, err := a.SaveState(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewModel(framework.ModelSpec{Task: framework.Binary, Inputs: 3, Options: auto})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.LoadState(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	if c.TunedOptions()["ridge"] != a.TunedOptions()["ridge"] || c.FitReport().Architecture != a.FitReport().Architecture {
		t.Errorf("loaded: %v, %q; want %v, %q", c.TunedOptions(), c.FitReport().Architecture, a.TunedOptions(), a.FitReport().Architecture)
	}
	pa, _ := a.Predict(context.Background(), x)
	pc, _ := c.Predict(context.Background(), x)
	if !mat.Equal(pa, pc) {
		t.Error("loaded model predicts otherwise")
	}
}

// TestRidgeSearchLooksAtContext: the ridge search of a least-squares fit,
// whose fits do not look at their context themselves, stops with ctx's
// error once ctx is done (a wide design's search took tens of seconds, a
// signal waited for all of it), and its models fit theta alone.
func TestRidgeSearchLooksAtContext(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 9))
	n, p := 60, 80
	x := randX(rng, n, p)
	y := make([]float64, n)
	for i := range y {
		y[i] = x.At(i, 0) + rng.NormFloat64()
	}
	md := &Model{task: framework.Regression, inputs: p, seed: 1, cfg: config{auto: true, maxIter: 100}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := md.tuneRidge(ctx, x.RawMatrix(), y); !errors.Is(err, context.Canceled) {
		t.Errorf("tuneRidge on a cancelled context: %v, want context.Canceled", err)
	}
	sub := &Model{task: framework.Regression, inputs: p, thetaOnly: true, cfg: config{ridge: 1}}
	if err := sub.fitRows(context.Background(), x.RawMatrix(), y); err != nil || sub.theta == nil || sub.cov != nil || sub.df != 0 {
		t.Errorf("a theta-only fit: err %v, theta set %t, cov set %t, df %g", err, sub.theta != nil, sub.cov != nil, sub.df)
	}
}
