package torch_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/framework/jacobian"
)

// What lazy asks of a plugin beyond the conformance kit: Gram, shift
// batches (primal and dual form), Jacobian products and matrices kept by
// handle, each answering as the plain calls do.
func TestTransportAdditions(t *testing.T) {
	b := sharedBackend(t)
	if !b.Capabilities().MatrixFree {
		t.Error("the plugin does not declare MatrixFree")
	}
	for _, task := range []framework.Task{framework.Regression, framework.Multiclass} {
		t.Run(task.String(), func(t *testing.T) { checkAdditions(t, b, task) })
	}
}

// data returns n x p standard normal inputs and a response for task (3
// classes for multiclass).
func data(n, p int, seed uint64, task framework.Task) (*mat.Dense, []float64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	x := mat.NewDense(n, p, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		r := x.RawRowView(i)
		for j := range r {
			r[j] = rng.NormFloat64()
		}
		f := r[0] - 0.5*r[1] + math.Sin(r[2])
		if task == framework.Multiclass {
			y[i] = float64(min(2, max(0, int(math.Floor(f+1.5)))))
		} else {
			y[i] = f + 0.1*rng.NormFloat64()
		}
	}
	return x, y
}

func checkAdditions(t *testing.T, b framework.Backend, task framework.Task) {
	ctx := context.Background()
	spec := framework.ModelSpec{Task: task, Inputs: 5, Seed: 3, Options: map[string]string{"hidden": "12", "epochs": "5"}}
	if task == framework.Multiclass {
		spec.Classes = 3
	}
	m, err := b.New(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	defer framework.Release(m)
	// 1000 x 5: above the client's 4096 values, so keyed.
	x, y := data(1000, 5, 1, task)
	if err := m.Fit(ctx, x, y); err != nil {
		t.Fatal(err)
	}
	g, ok := framework.As[framework.Gradienter](m)
	if !ok {
		t.Fatalf("the model (%T) has no gradients", m)
	}
	M := g.NumParams()
	k := task.Outputs(spec.Classes)
	x2, _ := data(900, 5, 2, task)

	// Predict twice on each of two matrices (the second call of each a
	// reference, a miss for the small cache): the same bits every time.
	var first []*mat.Dense
	for round := 0; round < 2; round++ {
		for i, xi := range []*mat.Dense{x, x2} {
			p, err := m.Predict(ctx, xi)
			if err != nil {
				t.Fatalf("Predict round %d, matrix %d: %v", round, i, err)
			}
			if round == 0 {
				first = append(first, p)
			} else if !mat.Equal(p, first[i]) {
				t.Errorf("Predict round %d, matrix %d: differs from round 0", round, i)
			}
		}
	}

	// Gram against the Jacobian.
	jac, err := g.Jacobian(ctx, x)
	if err != nil {
		t.Fatal(err)
	}
	rows, _ := jac.Dims()
	e := make([]float64, rows)
	rng := rand.New(rand.NewPCG(4, 4))
	for i := range e {
		e[i] = rng.NormFloat64()
	}
	gram, bv, err := jacobian.Gram(ctx, g, x, e, nil)
	if err != nil {
		t.Fatalf("Gram: %v", err)
	}
	var wantG mat.Dense
	wantG.Mul(jac.T(), jac)
	var wantB mat.VecDense
	wantB.MulVec(jac.T(), mat.NewVecDense(rows, e))
	closeTo(t, "Gram G", mat.DenseCopyOf(gram), &wantG)
	closeTo(t, "Gram b", mat.NewDense(M, 1, bv), mat.NewDense(M, 1, wantB.RawVector().Data))

	checkJacobianProducts(t, b, m, x, jac, rng)
	checkShiftBatches(t, m, g, x, x2, k, rng)
}

// checkJacobianProducts checks the remote model's Jacobian products on x
// against its Jacobian jac, by the plugin when it is MatrixFree, else by the
// client from the Jacobian (the remote model has the methods whatever its
// capabilities).
func checkJacobianProducts(t *testing.T, b framework.Backend, m framework.Model, x, jac *mat.Dense, rng *rand.Rand) {
	t.Helper()
	ctx := context.Background()
	rows, M := jac.Dims()
	if _, ok := framework.As[framework.JacobianMultiplier](m); ok != b.Capabilities().MatrixFree {
		t.Errorf("As[JacobianMultiplier] %v with MatrixFree %v", ok, b.Capabilities().MatrixFree)
	}
	jm, ok := m.(framework.JacobianMultiplier)
	if !ok {
		t.Fatalf("the remote model (%T) has no Jacobian products", m)
	}
	v, u := mat.NewDense(M, 2, nil), mat.NewDense(rows, 2, nil)
	for _, d := range []*mat.Dense{v, u} {
		raw := d.RawMatrix().Data
		for i := range raw {
			raw[i] = rng.NormFloat64()
		}
	}
	jv, err := jm.JacobianMul(ctx, x, v)
	if err != nil {
		t.Fatalf("JacobianMul: %v", err)
	}
	var want mat.Dense
	want.Mul(jac, v)
	closeTo(t, "JacobianMul", jv, &want)
	jtu, err := jm.JacobianTMul(ctx, x, u)
	if err != nil {
		t.Fatalf("JacobianTMul: %v", err)
	}
	want.Reset()
	want.Mul(jac.T(), u)
	closeTo(t, "JacobianTMul", jtu, &want)
	if _, err := jm.JacobianMul(ctx, x, u); err == nil {
		t.Errorf("JacobianMul of %d-row vectors with %d parameters: no error", rows, M)
	}
}

// checkShiftBatches checks shift batches against one call per shift,
// primal and dual, on x and x2 (k outputs a row).
func checkShiftBatches(t *testing.T, m framework.Model, g framework.Gradienter, x, x2 *mat.Dense, k int, rng *rand.Rand) {
	t.Helper()
	ctx := context.Background()
	M := g.NumParams()
	dtheta := make([]float64, M)
	for i := range dtheta {
		dtheta[i] = 0.01 * rng.NormFloat64()
	}
	xt := x.Slice(0, 300, 0, 5).(*mat.Dense)
	a := make([]float64, 300*k)
	for i := range a {
		a[i] = 0.001 * rng.NormFloat64()
	}
	shifts := []framework.Shift{{X: x2, DTheta: dtheta}, {X: x2, XTrain: xt, A: a}, {X: x, DTheta: dtheta}}
	preds, err := jacobian.PredictShifts(ctx, g, shifts)
	if err != nil {
		t.Fatalf("PredictShifts: %v", err)
	}
	kr, ok := framework.As[framework.Kerneler](m)
	if !ok {
		t.Fatalf("the model (%T) has no kernels", m)
	}
	jta, err := kr.JacobianTVec(ctx, xt, a)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range shifts {
		d := s.DTheta
		if s.XTrain != nil {
			d = jta
		}
		want, err := g.PredictShifted(ctx, s.X, d)
		if err != nil {
			t.Fatal(err)
		}
		if !mat.Equal(preds[i], want) {
			t.Errorf("shift %d: the batch differs from PredictShifted by up to %.3g", i, maxDiff(preds[i], want))
		}
	}
}

func closeTo(t *testing.T, what string, got, want *mat.Dense) {
	t.Helper()
	scale := math.Max(1, mat.Norm(want, math.Inf(1)))
	if d := maxDiff(got, want); !(d <= 1e-10*scale) {
		t.Errorf("%s: largest difference %.3g (scale %.3g)", what, d, scale)
	}
}

func maxDiff(a, b *mat.Dense) float64 {
	ar, ac := a.Dims()
	br, bc := b.Dims()
	if ar != br || ac != bc {
		return math.Inf(1)
	}
	var d mat.Dense
	d.Sub(a, b)
	return mat.Norm(&d, math.Inf(1))
}
