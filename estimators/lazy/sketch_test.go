package lazy

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
)

// The subsample's sketch preconditions the final solve with the same
// guarantee as the plain solve's, whatever the sketch's rank: at each
// tolerance the true energy error of the returned solution is within tau
// of the decrease, tighter for a tighter tau, in no more steps than the
// plain solve takes; its bound is never below the true energy error of
// the residual it is given, and below the plain ||r||^2 / alpha. A
// subsample of all the rows at full rank is the operator itself: one
// step.
func TestSketchPrecondMatchesClosedForm(t *testing.T) {
	ctx := context.Background()
	for i, m := range []int{130, 200} {
		r := newRF(4, m, uint64(i+1))
		g := rfMultiplierModel{r}
		p := problemFor(t, g, 120, 40, 4, uint64(i+10))
		f := framework.Feature{Name: "x1", Columns: []int{0}}
		x, e := droppedResiduals(r, p, f)
		for _, alpha := range []float64{3, 100} {
			wStar, decrease, a, _ := ridgeOptimum(r, p, f, alpha)
			for _, sz := range [][2]int{{40, 40}, {120, 8}, {120, 120}} {
				ns, rank := sz[0], sz[1]
				q := testProblem(Estimator{DoublePrecision: true}, g, x, p.YTrain, e, 0)
				rows := make([]int, ns)
				for k := range rows {
					rows[k] = k * (120 / ns)
				}
				sub := q.subset(rows)
				rp, err := sub.newRidge(ctx, nil, false)
				if err != nil {
					t.Fatal(err)
				}
				sk := &sketch{sub: sub, rp: rp.(*dual), rank: rank}
				prevErr := math.Inf(1)
				for _, tau := range []float64{1e-1, energyTol, 1e-4} {
					pre, err := sk.precond(ctx, alpha, 120)
					if err != nil || pre == nil {
						t.Fatalf("M %d alpha %g ns %d: no preconditioner (%v)", m, alpha, ns, err)
					}
					w, steps, pcgSteps, _, err := q.precondSolve(ctx, alpha, tau, pre)
					if err != nil {
						t.Fatal(err)
					}
					got := energy(a, w, wStar)
					if got > tau*decrease || got > prevErr {
						t.Errorf("M %d alpha %g ns %d rank %d tau %g: energy error %.3g (tau x decrease %.3g, the looser tolerance's %.3g)", m, alpha, ns, rank, tau, got, tau*decrease, prevErr)
					}
					prevErr = got
					if pcgSteps != steps {
						t.Errorf("M %d alpha %g ns %d tau %g: %d of %d steps preconditioned", m, alpha, ns, tau, pcgSteps, steps)
					}
					if ns == 120 && rank == ns && steps > 1 {
						t.Errorf("M %d alpha %g: the exact sketch took %d steps", m, alpha, steps)
					}
					_, plain, _, _, err := q.solveMatrixFree(ctx, alpha, tau, nil)
					if err != nil {
						t.Fatal(err)
					}
					if steps > plain {
						t.Errorf("M %d alpha %g ns %d tau %g: %d steps preconditioned, %d plain", m, alpha, ns, tau, steps, plain)
					}
					// The bound at the returned iterate's residual (to rounding: an
					// exact sketch's residual is rounding alone).
					res := mat.NewVecDense(len(w), nil)
					res.MulVec(a, mat.NewVecDense(len(w), w))
					rv := make([]float64, len(w))
					op, err := q.jacobianOp(ctx)
					if err != nil {
						t.Fatal(err)
					}
					b, err := op.mul(e, true)
					if err != nil {
						t.Fatal(err)
					}
					floats.SubTo(rv, b, res.RawVector().Data)
					z := make([]float64, len(rv))
					if err := pre.apply(z, rv); err != nil {
						t.Fatal(err)
					}
					bound := pre.bound(rv)
					if slack := 1e-12 * decrease; bound < got-slack || bound > floats.Dot(rv, rv)/alpha+slack {
						t.Errorf("M %d alpha %g ns %d tau %g: bound %.4g, energy error %.4g, ||r||^2/alpha %.4g", m, alpha, ns, tau, bound, got, floats.Dot(rv, rv)/alpha)
					}
				}
				sk.release()
			}
		}
	}
}

// droppedResiduals is the train rows of p with f dropped and the full
// model r's residuals on them.
func droppedResiduals(r *rfModel, p *framework.Problem, f framework.Feature) (*mat.Dense, []float64) {
	x := p.Drop(p.XTrain, f)
	base, _ := r.Predict(context.Background(), x)
	e := make([]float64, len(p.YTrain))
	for k := range e {
		e[k] = p.YTrain[k] - base.At(k, 0)
	}
	return x, e
}
