package permute_test

import (
	"math"
	"testing"

	"github.com/lazyvi/lazyvi/estimators/internal/closedform"
	"github.com/lazyvi/lazyvi/estimators/permute"
)

// On the linear setting with rho 0.9 and a least-squares full model,
// permuting x_j adds 2 beta_j^2 Var(x_j) to the squared loss (4.5 for x1),
// whatever the correlation: more than twice the conditional importance
// beta_1^2 (1 - rho^2) = 0.4275 that retrain estimates. Permuting the group
// {x1, x2} jointly adds 2 Var(1.5 x1 + 1.2 x2) = 2 (1.5^2 + 1.2^2 +
// 2 1.5 1.2 rho). Tolerances: 4 standard errors, plus the least-squares
// coefficients' own error (about 0.05 of a coefficient's square at n 3000).
func TestPermuteClosedForm(t *testing.T) {
	res := closedform.Linear(t, permute.Permute{}, 3000, 1, "")
	for j, f := range []string{"x1", "x2", "x3"} {
		b := closedform.Beta[j]
		want := 2 * b * b
		if r := res[f]; math.Abs(r.VI-want) > 4*r.SE+0.05*want {
			t.Errorf("%s: vi %.4f (se %.4f), want 2 beta^2 = %.4f", f, r.VI, r.SE, want)
		}
	}
	cond := 1.5 * 1.5 * (1 - closedform.Rho*closedform.Rho)
	if r := res["x1"]; r.VI-4*r.SE < 2*cond {
		t.Errorf("x1: vi %.4f (se %.4f), want above twice the conditional importance %.4f", r.VI, r.SE, cond)
	}
	for _, f := range []string{"x4", "x5", "x6"} {
		if r := res[f]; math.Abs(r.VI) > 4*r.SE+0.01 {
			t.Errorf("%s: vi %.4f (se %.4f), want 0", f, r.VI, r.SE)
		}
	}

	g := closedform.Linear(t, permute.Permute{}, 3000, 1, "g=x1,x2")
	want := 2 * (1.5*1.5 + 1.2*1.2 + 2*1.5*1.2*closedform.Rho)
	r, ok := g["g"]
	if !ok {
		t.Fatalf("no result for the group x1,x2: %v", g)
	}
	if math.Abs(r.VI-want) > 4*r.SE+0.05*want {
		t.Errorf("group x1,x2: vi %.4f (se %.4f), want %.4f", r.VI, r.SE, want)
	}
}

// The same seed gives the same numbers; another seed another permutation.
func TestPermuteSeeded(t *testing.T) {
	a := closedform.Linear(t, permute.Permute{}, 500, 3, "")
	b := closedform.Linear(t, permute.Permute{}, 500, 3, "")
	for f, r := range a {
		if b[f].VI != r.VI || b[f].SE != r.SE {
			t.Errorf("%s: seed 3 gave %v then %v", f, r.VI, b[f].VI)
		}
	}
}
