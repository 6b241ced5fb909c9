package lazy

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
)

// baselineCarry is the Ritz pairs of the baseline's matrix-free solve at
// alpha on the random-features model (no feature dropped), as lazy's
// baseline carries them.
func baselineCarry(t *testing.T, g framework.Gradienter, p *framework.Problem, alpha float64) []float64 {
	t.Helper()
	ctx := context.Background()
	base, err := g.Predict(ctx, p.XTrain)
	if err != nil {
		t.Fatal(err)
	}
	e := make([]float64, len(p.YTrain))
	for i := range e {
		e[i] = p.YTrain[i] - base.At(i, 0)
	}
	_, _, _, kr, err := doubleProblem(g, p.XTrain, e).solveMatrixFree(ctx, alpha, energyTol, nil)
	if err != nil {
		t.Fatal(err)
	}
	carry := ritzCarry(kr, g.NumParams(), defaultCarryMaxValues)
	if carry == nil {
		t.Fatal("no Ritz pairs from the baseline's basis")
	}
	return carry
}

// The carry's Ritz pairs are the basis's: V orthonormal, and P^-1 the
// inverse of alpha I + V Theta V^T on any vector; a carry of another size
// is refused.
func TestRitzPrecondInverts(t *testing.T) {
	r := newRF(4, 60, 3)
	g := rfMultiplierModel{r}
	p := problemFor(t, g, 100, 40, 4, 13)
	carry := baselineCarry(t, g, p, 5)
	m := g.NumParams()
	k := int(carry[0])
	if k < 2 {
		t.Fatalf("%d Ritz pairs: too few to test", k)
	}
	for i := 0; i < k; i++ {
		vi := carry[1+k+i*m : 1+k+(i+1)*m]
		for j := 0; j <= i; j++ {
			want := 0.0
			if i == j {
				want = 1
			}
			// The basis is orthogonal to working precision
			// (reorthogonalised), the eigenvectors of T too.
			if got := floats.Dot(vi, carry[1+k+j*m:1+k+(j+1)*m]); math.Abs(got-want) > 1e-12 {
				t.Errorf("v_%d . v_%d = %g, want %g", i, j, got, want)
			}
		}
	}
	const alpha = 7.0
	pre := newRitzPrecond(carry, m, alpha)
	if pre == nil || len(pre.v) == 0 {
		t.Fatal("carry refused")
	}
	rng := rand.New(rand.NewPCG(5, 5))
	x := make([]float64, m)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	px := make([]float64, m) // (alpha I + V Theta V^T) x
	floats.ScaleTo(px, alpha, x)
	for i, v := range pre.v {
		floats.AddScaled(px, pre.theta[i]*floats.Dot(v, x), v)
	}
	got := make([]float64, m)
	pre.apply(got, px)
	// The Ritz values are at most ||A||, so P's condition number is at
	// most ||A|| / alpha; rounding is that times eps, and 100 eps more.
	maxTheta := floats.Max(pre.theta)
	if d := floats.Distance(got, x, math.Inf(1)) / floats.Norm(x, math.Inf(1)); d > 100*eps*(1+maxTheta/alpha) {
		t.Errorf("P^-1 P x differs from x by %g (relative)", d)
	}
	for _, bad := range [][]float64{carry[:len(carry)-1], append([]float64{float64(k) + 0.5}, carry[1:]...), {0}} {
		if newRitzPrecond(bad, m, alpha) != nil {
			t.Errorf("a carry of %d values (k %g) was accepted for %d parameters", len(bad), bad[0], m)
		}
	}
}

// The preconditioned solve keeps the plain solve's guarantee whatever the
// preconditioner: the true energy error at most tau times the decrease,
// for the baseline's Ritz pairs, a tighter tolerance no worse than a
// looser one, and for pairs that fit the problem badly (the Ritz pairs of
// another model's basis, where the plain solve takes over) too, and for
// pairs whose vectors are not orthonormal (each pair twice: P^-1 is then
// indefinite, the rule does not rest on it). Reduce's predictions from the baseline's
// Carry are then as close to the closed form as the plain solve's.
func TestLazyPrecondMatchesClosedForm(t *testing.T) {
	ctx := context.Background()
	// Which paths each carry's solves took: preconditioned to the end
	// (false), or on unpreconditioned (true).
	paths := map[string]map[bool]bool{"baseline's": {}, "another's": {}}
	defer func() {
		if !paths["baseline's"][false] || !paths["another's"][true] {
			t.Errorf("the baseline's pairs never preconditioned a solve to its end, or another model's never handed over to the plain solve: %v", paths)
		}
	}()
	for i, m := range []int{20, 150} {
		r := newRF(4, m, uint64(i+1))
		g := rfMultiplierModel{r}
		p := problemFor(t, g, 100, 40, 4, uint64(i+10))
		f := framework.Feature{Name: "x1", Columns: []int{0}}
		x, e := droppedResiduals(r, p, f)
		other := newRF(4, m, uint64(i+50))
		for _, alpha := range []float64{3, 100} {
			wStar, decrease, a, norms := ridgeOptimum(r, p, f, alpha)
			own := baselineCarry(t, g, p, alpha)
			for name, carry := range map[string][]float64{
				"baseline's": own,
				"another's":  baselineCarry(t, rfMultiplierModel{other}, problemFor(t, rfMultiplierModel{other}, 100, 40, 4, uint64(i+60)), alpha/4),
				"duplicated": duplicatePairs(own, m),
			} {
				pre := newRitzPrecond(carry, m, alpha)
				prevErr := math.Inf(1)
				for _, tau := range []float64{1e-1, energyTol, 1e-4} {
					w, steps, pcgSteps, flops, err := doubleProblem(g, x, e).precondSolve(ctx, alpha, tau, pre)
					if err != nil {
						t.Fatalf("M %d alpha %g %s tau %g: %v", m, alpha, name, tau, err)
					}
					got := energy(a, w, wStar)
					if got > tau*decrease {
						t.Errorf("M %d alpha %g %s tau %g: energy error %.3g above tau x decrease %.3g (%d steps)", m, alpha, name, tau, got, tau*decrease, steps)
					}
					if got > prevErr {
						t.Errorf("M %d alpha %g %s tau %g: error %.3g, the looser tolerance's %.3g", m, alpha, name, tau, got, prevErr)
					}
					// A product pair per step and one for Phi^T e.
					if pairs := 2 * float64(len(e)) * float64(m) * float64(2*steps+1); flops < pairs {
						t.Errorf("M %d alpha %g %s: %g flops counted for %d steps, below the products' %g", m, alpha, name, flops, steps, pairs)
					}
					prevErr = got
					if paths[name] != nil {
						paths[name][pcgSteps < steps] = true
					}
				}
			}
			lz := Estimator{Folds: 4, Lambda: alpha, Memory: tinyMemory}
			b, err := lz.Baseline(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			if b.Carry == nil {
				t.Fatalf("M %d alpha %g: the baseline carries nothing", m, alpha)
			}
			red, err := lz.ReduceFrom(ctx, p, f, func() (framework.Reduced, error) { return b, nil })
			if err != nil {
				t.Fatal(err)
			}
			if red.Stats[statPrecond] < 1 || red.Carry != nil {
				t.Fatalf("M %d alpha %g: not preconditioned, or a feature carries: stats %v, %d values carried", m, alpha, red.Stats, len(red.Carry))
			}
			want := wantLazy(r, p, f, alpha)
			for k, wv := range want {
				bound := norms[k] * math.Sqrt(energyTol*decrease/alpha)
				if gv := red.Pred.At(k, 0); math.Abs(gv-wv) > bound {
					t.Fatalf("M %d alpha %g: row %d: want %v, got %v (bound %g)", m, alpha, k, wv, gv, bound)
				}
			}
		}
	}
}

// A feature whose penalty is below precondWhen of the baseline's, and one
// whose baseline carries nothing (a run resumed from an older checkpoint,
// or a baseline solved densely), solve unpreconditioned.
func TestLazyPrecondOnlyWhen(t *testing.T) {
	ctx := context.Background()
	r := newRF(4, 40, 2)
	g := rfMultiplierModel{r}
	p := problemFor(t, g, 100, 40, 4, 12)
	f := framework.Feature{Name: "x1", Columns: []int{0}}
	const alpha = 10.0
	carry := baselineCarry(t, g, p, alpha)
	for _, tc := range []struct {
		name    string
		base    framework.Reduced
		precond bool
	}{
		{"at the baseline's penalty", framework.Reduced{Stats: map[string]float64{statLambda: alpha}, Carry: carry}, true},
		{"at half of it", framework.Reduced{Stats: map[string]float64{statLambda: alpha / defaultPrecondWhen}, Carry: carry}, true},
		{"below half of it", framework.Reduced{Stats: map[string]float64{statLambda: 1.01 * alpha / defaultPrecondWhen}, Carry: carry}, false},
		{"no carry", framework.Reduced{Stats: map[string]float64{statLambda: alpha}}, false},
	} {
		red, err := Estimator{Folds: 4, Lambda: alpha, Memory: tinyMemory}.ReduceFrom(ctx, p, f, func() (framework.Reduced, error) { return tc.base, nil })
		if err != nil {
			t.Fatal(err)
		}
		if got := red.Stats[statPrecond] >= 1; got != tc.precond {
			t.Errorf("%s: preconditioned %v, want %v", tc.name, got, tc.precond)
		}
	}
}

// duplicatePairs returns carry (ritzCarry's, for m parameters) with each
// Ritz pair twice: V^T V is then 2 I on the pairs, and P^-1 =
// (1/alpha)(I - V C V^T), C = diag(theta/(theta + alpha)), has the
// eigenvalue (1 - 2 c)/alpha < 0 along each v with theta > alpha.
func duplicatePairs(carry []float64, m int) []float64 {
	k := int(carry[0])
	out := []float64{float64(2 * k)}
	out = append(out, carry[1:1+k]...)
	out = append(out, carry[1:1+k]...)
	out = append(out, carry[1+k:1+k+k*m]...)
	return append(out, carry[1+k:1+k+k*m]...)
}

// duplicatePairs makes P^-1 indefinite where a Ritz value exceeds the
// penalty: the case TestLazyPrecondMatchesClosedForm's duplicated carry
// stands for.
func TestDuplicatePairsIndefinite(t *testing.T) {
	r := newRF(4, 60, 3)
	g := rfMultiplierModel{r}
	p := problemFor(t, g, 100, 40, 4, 13)
	const alpha = 3.0
	m := g.NumParams()
	carry := baselineCarry(t, g, p, alpha)
	k := int(carry[0])
	top := 0
	for i := 1; i < k; i++ {
		if carry[1+i] > carry[1+top] {
			top = i
		}
	}
	if carry[1+top] <= alpha {
		t.Fatalf("largest Ritz value %g at most alpha %g", carry[1+top], alpha)
	}
	v := carry[1+k+top*m : 1+k+(top+1)*m]
	for name, c := range map[string][]float64{"own": carry, "duplicated": duplicatePairs(carry, m)} {
		pre := newRitzPrecond(c, m, alpha)
		z := make([]float64, m)
		pre.apply(z, v)
		vpv := floats.Dot(v, z)
		if indefinite := vpv < 0; indefinite != (name == "duplicated") {
			t.Errorf("%s pairs: v^T P^-1 v = %g for the top Ritz vector", name, vpv)
		}
	}
}

// A baseline whose basis outgrew carryMaxPairs carries the pairs of its
// largest Ritz values only: each v_i a unit vector with v_i^T A v_i =
// theta_i (A the normal operator Phi^T Phi; Ritz pairs of a Krylov basis
// satisfy it exactly), the values the top carryMaxPairs of T's.
func TestRitzCarryBounded(t *testing.T) {
	ctx := context.Background()
	r := newRF(4, 150, 1)
	g := rfMultiplierModel{r}
	p := problemFor(t, g, 200, 40, 4, 10)
	m := g.NumParams()
	op, err := doubleProblem(g, p.XTrain, p.YTrain).jacobianOp(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rhs, err := op.mul(p.YTrain, true)
	if err != nil {
		t.Fatal(err)
	}
	kr := newKrylov(op, rhs)
	const k = carryMaxPairs + 8
	for kr.steps() < k && !kr.exact {
		if err := kr.extend(); err != nil {
			t.Fatal(err)
		}
	}
	if kr.steps() < k {
		t.Fatalf("the basis is exact after %d steps: the bound cannot be tested", kr.steps())
	}
	carry := ritzCarry(kr, m, defaultCarryMaxValues)
	if carry == nil || carry[0] != carryMaxPairs || len(carry) != 1+carryMaxPairs+carryMaxPairs*m {
		t.Fatalf("%d steps carried %d values, want %d pairs (%d values)", k, len(carry), carryMaxPairs, 1+carryMaxPairs+carryMaxPairs*m)
	}
	// The bound in values: 10.5 pairs' worth carries the 10 largest
	// (the last 10 of carryMaxPairs, values ascending), less than one
	// pair's nothing. The vectors are the same dot products of T's
	// eigenvectors with the basis, as a product of another shape sums
	// them: k terms of at most 1, k eps apart at most.
	if c := ritzCarry(kr, m, 10*m+m/2); c == nil || c[0] != 10 || len(c) != 1+10+10*m ||
		!floats.Equal(c[1:11], carry[1+carryMaxPairs-10:1+carryMaxPairs]) || !floats.EqualApprox(c[11:], carry[1+carryMaxPairs+(carryMaxPairs-10)*m:], 4*k*eps) {
		t.Errorf("a bound of 10.5 pairs' values: %d values carried, want the 10 largest pairs", len(c))
	}
	if c := ritzCarry(kr, m, m-1); c != nil {
		t.Errorf("a bound below one pair's values: %d values carried, want none", len(c))
	}
	var es mat.EigenSym
	if !es.Factorize(kr.tridiagonal(), false) {
		t.Fatal("no eigenvalues of T")
	}
	all := es.Values(nil)
	top := all[k-1]
	av := make([]float64, m)
	for i := 0; i < carryMaxPairs; i++ {
		theta := carry[1+i]
		v := carry[1+carryMaxPairs+i*m : 1+carryMaxPairs+(i+1)*m]
		if want := all[k-carryMaxPairs+i]; math.Abs(theta-want) > 1e-12*top {
			t.Errorf("theta_%d = %g, want T's %g", i, theta, want)
		}
		if err := op.mulVec(av, v); err != nil {
			t.Fatal(err)
		}
		// Rounding of the reorthogonalised basis: k eps relative to ||A||.
		if n, q := floats.Dot(v, v), floats.Dot(v, av); math.Abs(n-1) > 1e-12 || math.Abs(q-theta) > 1e-10*top {
			t.Errorf("pair %d: ||v||^2 = %g, v^T A v = %g, theta %g", i, n, q, theta)
		}
	}
}
