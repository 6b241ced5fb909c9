package cpi_test

import (
	"math"
	"testing"

	"github.com/lazyvi/lazyvi/estimators/cpi"
	"github.com/lazyvi/lazyvi/estimators/internal/closedform"
	"github.com/lazyvi/lazyvi/framework"
)

// On the linear setting with rho 0.9 and a least-squares full model,
// Sobol-CPI with D draws estimates the conditional importance
// beta_j^2 Var(x_j | x_-j) times (1 + 1/D): 0.4275 (1.02) for x1, where
// dropout and permutation importance report 2.25 and 4.5. For the group
// {x1, x2}, independent of the others, it is Var(1.5 x1 + 1.2 x2) (1 +
// 1/D). Tolerances: 4 standard errors plus the least-squares coefficients'
// error (0.05 of the value at n 3000); x1 also within 25%.
func TestCPIClosedForm(t *testing.T) {
	e := cpi.CPI{Draws: cpi.DefaultDraws}
	bias := 1 + 1/float64(e.Draws)
	res := closedform.Linear(t, e, 3000, 1, "")
	c := 1 - closedform.Rho*closedform.Rho
	for j, f := range []string{"x1", "x2", "x3"} {
		b := closedform.Beta[j]
		want := b * b * bias
		if j < 2 {
			want *= c
		}
		if r := res[f]; math.Abs(r.VI-want) > 4*r.SE+0.05*want {
			t.Errorf("%s: vi %.4f (se %.4f), want %.4f", f, r.VI, r.SE, want)
		}
	}
	if r := res["x1"]; math.Abs(r.VI-0.4275) > 0.25*0.4275 {
		t.Errorf("x1: vi %.4f, want within 25%% of 0.4275", r.VI)
	}
	for _, f := range []string{"x4", "x5", "x6"} {
		if r := res[f]; math.Abs(r.VI) > 4*r.SE+0.01 {
			t.Errorf("%s: vi %.4f (se %.4f), want 0", f, r.VI, r.SE)
		}
	}

	g := closedform.Linear(t, e, 3000, 1, "g=x1,x2")
	want := (1.5*1.5 + 1.2*1.2 + 2*1.5*1.2*closedform.Rho) * bias
	if r := g["g"]; math.Abs(r.VI-want) > 4*r.SE+0.05*want {
		t.Errorf("group x1,x2: vi %.4f (se %.4f), want %.4f", r.VI, r.SE, want)
	}
}

// One draw is the original CPI, which scores f on a single conditional
// sample and so estimates twice the conditional importance (for x3,
// independent of the others: 2 beta_3^2 = 2).
func TestCPIOneDrawIsTwice(t *testing.T) {
	res := closedform.Linear(t, cpi.CPI{Draws: 1}, 3000, 2, "")
	for j, f := range []string{"x1", "x3"} {
		b := closedform.Beta[j*2]
		want := 2 * b * b
		if j == 0 {
			want *= 1 - closedform.Rho*closedform.Rho
		}
		if r := res[f]; math.Abs(r.VI-want) > 4*r.SE+0.05*want {
			t.Errorf("%s: vi %.4f (se %.4f), want %.4f", f, r.VI, r.SE, want)
		}
	}
}

func TestCPISettings(t *testing.T) {
	e, err := framework.Configure(cpi.CPI{Draws: cpi.DefaultDraws}, map[string]string{"cpi-draws": "7", "folds": "3"})
	if err != nil {
		t.Fatal(err)
	}
	if e.(cpi.CPI).Draws != 7 {
		t.Errorf("draws %d, want 7", e.(cpi.CPI).Draws)
	}
	if _, err := framework.Configure(cpi.CPI{}, map[string]string{"cpi-draws": "0"}); err == nil {
		t.Error("cpi-draws 0 accepted")
	}
}
