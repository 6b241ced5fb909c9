package frameworktest

import (
	"context"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
)

// mcClasses is the number of classes of the multiclass checks.
const mcClasses = 3

// runMulticlass and runWarmStart are the checks of the Multiclass and
// WarmStart capabilities:
//
//   - Multiclass: Fit and Predict on a 3-class data set; predictions are
//     n x 3 rows of probabilities summing to 1, more accurate on the training
//     rows than the majority class; with Gradients, the (3n) x M Jacobian
//     (row i*3 + k: the gradient of P(Y_i = k)) matches finite differences
//     of PredictShifted, with Kernel, Kernel and JacobianTVec match it, and
//     with MatrixFree, JacobianMul and JacobianTMul.
//   - WarmStart: the fitted model is a framework.WarmStarter; WarmStart
//     returns a fitted model with the capabilities' interfaces, moves the
//     predictions, leaves the receiver unchanged and is deterministic in its
//     seed; for every task the backend supports.
//   - WarmStop: the fitted model is a framework.WarmStopper;
//     WarmStartStopped returns a fitted model that ran between 1 and the
//     epochs allowed (its FitReport), is deterministic in its seed and
//     leaves the receiver unchanged.
func runMulticlass(t tb, b framework.Backend, c *config) {
	caps := b.Capabilities()
	if !caps.Multiclass {
		return
	}
	t.run("Multiclass", func(t tb) { checkMulticlass(t, b, c) })
	if caps.Gradients {
		t.run("Gradients/multiclass", func(t tb) { checkGradientsMulti(t, b, c) })
	}
	if caps.Kernel {
		t.run("Kernel/multiclass", func(t tb) { checkKernelMulti(t, b, c) })
	}
	if caps.MatrixFree {
		t.run("MatrixFree/multiclass", func(t tb) { checkMatrixFree(t, b, c, framework.Multiclass) })
	}
}

func runWarmStart(t tb, b framework.Backend, c *config, tasks []framework.Task) {
	if !b.Capabilities().WarmStart {
		return
	}
	if b.Capabilities().Multiclass {
		tasks = append(tasks, framework.Multiclass)
	}
	for _, task := range tasks {
		t.run("WarmStart/"+task.String(), func(t tb) { checkWarmStart(t, b, c, task) })
		if b.Capabilities().WarmStop {
			t.run("WarmStop/"+task.String(), func(t tb) { checkWarmStop(t, b, c, task) })
		}
	}
}

// mcDataset returns n rows of p standard normal inputs and labels 0..2: the
// argmax of three smooth functions plus noise.
func mcDataset(n, p int, seed int64) (*mat.Dense, []float64) {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x3c1a55))
	x := mat.NewDense(n, p, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		r := x.RawRowView(i)
		for k := range r {
			r[k] = rng.NormFloat64()
		}
		s := []float64{2 * r[0], -r[0] + 1.5*r[1], math.Sin(2*r[2]) - r[1]}
		best := 0
		for k := range s {
			s[k] += 0.3 * rng.NormFloat64()
			if s[k] > s[best] {
				best = k
			}
		}
		y[i] = float64(best)
	}
	for k := 0; k < mcClasses && k < n; k++ {
		y[k] = float64(k) // every class present
	}
	return x, y
}

func (c *config) mcSpec() framework.ModelSpec {
	s := c.spec(framework.Multiclass)
	s.Classes = mcClasses
	return s
}

// fittedTask is fitted for any task, multiclass included.
func fittedTask(t tb, b framework.Backend, c *config, task framework.Task) (framework.Model, *mat.Dense, []float64) {
	t.Helper()
	if task != framework.Multiclass {
		return fitted(t, b, c, task)
	}
	m, err := b.New(context.Background(), c.mcSpec())
	if err != nil {
		t.Fatalf("New(multiclass): %v", err)
	}
	t.Cleanup(func() { _ = framework.Release(m) })
	x, y := mcDataset(c.n, c.p, c.seed)
	if err := m.Fit(context.Background(), x, y); err != nil {
		t.Fatalf("Fit(multiclass): %v", err)
	}
	return m, x, y
}

func checkClassProbs(t tb, what string, pred *mat.Dense, n int) {
	t.Helper()
	if r, cc := pred.Dims(); r != n || cc != mcClasses {
		t.Fatalf("%s: want %dx%d class probabilities, got %dx%d", what, n, mcClasses, r, cc)
	}
	for i := 0; i < n; i++ {
		var s float64
		for k := 0; k < mcClasses; k++ {
			v := pred.At(i, k)
			if !(v >= 0 && v <= 1) {
				t.Fatalf("%s: row %d, class %d: probability %v", what, i, k, v)
			}
			s += v
		}
		if math.Abs(s-1) > 1e-9 {
			t.Fatalf("%s: row %d: probabilities sum to %v", what, i, s)
		}
	}
}

func checkMulticlass(t tb, b framework.Backend, c *config) {
	m, err := b.New(context.Background(), c.mcSpec())
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	defer framework.Release(m)
	ctx := context.Background()
	x, y := mcDataset(c.n, c.p, c.seed)
	if err := m.Fit(ctx, x, y); err != nil {
		t.Fatalf("Fit: %v", err)
	}
	pred, err := m.Predict(ctx, x)
	if err != nil {
		t.Fatalf("Predict: %v", err)
	}
	checkClassProbs(t, "Predict(train)", pred, c.n)
	if c.noSkill {
		return
	}
	counts := make([]int, mcClasses)
	right := 0
	for i, lab := range y {
		counts[int(lab)]++
		best := 0
		for k := 1; k < mcClasses; k++ {
			if pred.At(i, k) > pred.At(i, best) {
				best = k
			}
		}
		if best == int(lab) {
			right++
		}
	}
	majority := max(counts[0], counts[1], counts[2])
	if right <= majority {
		t.Errorf("training accuracy %d/%d is not above the majority class's %d", right, c.n, majority)
	}
}

// flat returns the n x K predictions as one vector, row i*K + k.
func flat(p *mat.Dense) []float64 {
	r, k := p.Dims()
	out := make([]float64, 0, r*k)
	for i := 0; i < r; i++ {
		out = append(out, p.RawRowView(i)...)
	}
	return out
}

func checkGradientsMulti(t tb, b framework.Backend, c *config) {
	m, x, _ := fittedTask(t, b, c, framework.Multiclass)
	g, ok := framework.As[framework.Gradienter](m)
	if !ok {
		t.Fatalf("Capabilities say Gradients, but the model (%T) is not a framework.Gradienter", m)
	}
	ctx := context.Background()
	xs := x.Slice(0, min(c.n, 12), 0, c.p).(*mat.Dense)
	n, _ := xs.Dims()
	M := g.NumParams()
	jac, err := g.Jacobian(ctx, xs)
	if err != nil {
		t.Fatalf("Jacobian: %v", err)
	}
	if r, cc := jac.Dims(); r != n*mcClasses || cc != M {
		t.Fatalf("Jacobian: want %dx%d (%d rows per sample), got %dx%d", n*mcClasses, M, mcClasses, r, cc)
	}
	checkJacobianByDifferences(t, c, g, jacobianAt{xs: xs, jac: jac, k: mcClasses}, 0xd2, func(pp *mat.Dense) { checkClassProbs(t, "PredictShifted", pp, n) })
}

func checkKernelMulti(t tb, b framework.Backend, c *config) {
	m, x, _ := fittedTask(t, b, c, framework.Multiclass)
	kr := m.(framework.Kerneler)
	g := m.(framework.Gradienter)
	ctx := context.Background()
	x1 := x.Slice(0, 9, 0, c.p).(*mat.Dense)
	x2 := x.Slice(9, 14, 0, c.p).(*mat.Dense)
	j1 := checkKernelAgainstJacobian(t, g, kr, x1, x2)
	rows, _ := j1.Dims()
	rng := rand.New(rand.NewPCG(uint64(c.seed), 0xb))
	a := make([]float64, rows)
	for i := range a {
		a[i] = rng.NormFloat64()
	}
	jta, err := kr.JacobianTVec(ctx, x1, a)
	if err != nil {
		t.Fatalf("JacobianTVec: %v", err)
	}
	var want mat.VecDense
	want.MulVec(j1.T(), mat.NewVecDense(rows, a))
	if len(jta) != g.NumParams() {
		t.Fatalf("JacobianTVec: want length %d, got %d", g.NumParams(), len(jta))
	}
	checkClose(t, "JacobianTVec against J^T a", mat.NewDense(len(jta), 1, jta), mat.NewDense(len(jta), 1, want.RawVector().Data))
}

func checkWarmStart(t tb, b framework.Backend, c *config, task framework.Task) {
	m, x, y := fittedTask(t, b, c, task)
	ws, ok := framework.As[framework.WarmStarter](m)
	if !ok {
		t.Fatalf("Capabilities say WarmStart, but the model (%T) is not a framework.WarmStarter", m)
	}
	ctx := context.Background()
	before, err := m.Predict(ctx, x)
	if err != nil {
		t.Fatal(err)
	}
	warm := func(steps int, seed int64) *mat.Dense {
		t.Helper()
		w, err := ws.WarmStart(ctx, x, y, steps, seed)
		if err != nil {
			t.Fatalf("WarmStart(%d steps): %v", steps, err)
		}
		defer framework.Release(w)
		caps := b.Capabilities()
		if _, ok := framework.As[framework.Gradienter](w); caps.Gradients && !ok {
			t.Errorf("the warm-started model (%T) is not a framework.Gradienter", w)
		}
		if _, ok := framework.As[framework.WarmStarter](w); !ok {
			t.Errorf("the warm-started model (%T) is not a framework.WarmStarter", w)
		}
		p, err := w.Predict(ctx, x)
		if err != nil {
			t.Fatalf("Predict of the warm-started model: %v", err)
		}
		if task == framework.Multiclass {
			checkClassProbs(t, "warm-started Predict", p, c.n)
		} else {
			checkPredictions(t, "warm-started Predict", p, c.n, task)
		}
		return p
	}
	p1 := warm(0, 7)
	p2 := warm(0, 7)
	if !mat.Equal(p1, p2) {
		t.Errorf("two warm starts with seed 7 differ by up to %.3g", maxAbsDiff(p1, p2))
	}
	if mat.Equal(p1, before) {
		t.Errorf("one epoch of warm-started training left every prediction unchanged")
	}
	warm(3, 8)
	after, err := m.Predict(ctx, x)
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(before, after) {
		t.Errorf("WarmStart changed the receiver's predictions (by up to %.3g)", maxAbsDiff(before, after))
	}
}

func checkWarmStop(t tb, b framework.Backend, c *config, task framework.Task) {
	m, x, y := fittedTask(t, b, c, task)
	ws, ok := framework.As[framework.WarmStopper](m)
	if !ok {
		t.Fatalf("Capabilities say WarmStop, but the model (%T) is not a framework.WarmStopper", m)
	}
	ctx := context.Background()
	before, err := m.Predict(ctx, x)
	if err != nil {
		t.Fatal(err)
	}
	const maxEpochs = 4
	stopped := func(seed int64) *mat.Dense {
		t.Helper()
		w, err := ws.WarmStartStopped(ctx, x, y, maxEpochs, seed)
		if err != nil {
			t.Fatalf("WarmStartStopped: %v", err)
		}
		defer framework.Release(w)
		if e := framework.FitReportOf(w).Epochs; e < 1 || e > maxEpochs {
			t.Errorf("WarmStartStopped with at most %d epochs ran %d", maxEpochs, e)
		}
		p, err := w.Predict(ctx, x)
		if err != nil {
			t.Fatalf("Predict of the warm-stopped model: %v", err)
		}
		if task == framework.Multiclass {
			checkClassProbs(t, "warm-stopped Predict", p, c.n)
		} else {
			checkPredictions(t, "warm-stopped Predict", p, c.n, task)
		}
		return p
	}
	if p1, p2 := stopped(7), stopped(7); !mat.Equal(p1, p2) {
		t.Errorf("two warm stops with seed 7 differ by up to %.3g", maxAbsDiff(p1, p2))
	}
	after, err := m.Predict(ctx, x)
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(before, after) {
		t.Errorf("WarmStartStopped changed the receiver's predictions (by up to %.3g)", maxAbsDiff(before, after))
	}
}
