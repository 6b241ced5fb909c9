// Package frameworktest is the conformance kit for lazyvi backends, in the
// manner of testing/fstest: a backend's own tests call TestBackend, which
// checks everything the estimators rely on (Check runs the same checks
// outside a test and returns the failures). The plugin transport's checks
// are in backendplugin/plugintest; TestEquivalent compares two backends
// that must behave as one (a backend and its plugin, say).
//
//	func TestConformance(t *testing.T) {
//		frameworktest.TestBackend(t, mybackend.Backend{},
//			frameworktest.WithOptions(map[string]string{"epochs": "20"}))
//	}
//
// The checks, each a subtest:
//
//   - Describe: Kernel implies Gradients; option names are unique and
//     documented; an unknown option and a spec without inputs are refused
//     with an error wrapping framework.ErrUsage.
//   - Regression, and Binary when Capabilities().Classification: Fit and
//     Predict on a small data set; predictions are n x 1, finite (in [0, 1]
//     for binary), better than the constant mean on the training rows, and
//     the inputs are left unmodified.
//   - Deterministic: two models with the same seed give bit-identical
//     predictions.
//   - Concurrent: Predict from several goroutines at once gives the same
//     answers as one call.
//   - Gradients, when Capabilities().Gradients: the model implements
//     framework.Gradienter; the Jacobian is n x NumParams and matches
//     central finite differences of PredictShifted (per parameter, for up
//     to 24 parameters spread over theta, and along a random direction);
//     PredictShifted at zero is Predict. For regression and for binary when
//     the backend classifies.
//   - Kernel, when Capabilities().Kernel: the model implements
//     framework.Kerneler; Kernel(x1, x2) = J1 J2^T, Kernel(x, nil) = J J^T
//     (symmetric) and JacobianTVec(x, a) = J^T a. With
//     Capabilities().SingleKernel (which needs Kernel) the model is also
//     a framework.SingleKerneler whose Kernel and JacobianTVec agree with
//     J1 J2^T, J J^T (exactly symmetric) and J^T a to 1e-4 of the largest
//     element of |J1| |J2|^T, |J| |J|^T and |J|^T |a|, as the
//     single-precision products below.
//   - MatrixFree, when Capabilities().MatrixFree: the model implements
//     framework.JacobianMultiplier; JacobianMul(x, V) = J V and
//     JacobianTMul(x, U) = J^T U for batches of three vectors (multiclass
//     too, when Capabilities().Multiclass: K rows per sample); a model that
//     is also a framework.PreparedPredictor predicts by PredictPrepared
//     exactly what Predict does, and the products are checked after it.
//     With Capabilities().SinglePrecision the model is also a
//     framework.SinglePrecisioner whose products agree with J V and J^T U
//     to 1e-4 of the largest element of |J| |V| (|J|^T |U|): float32's
//     rounding, 6e-8, over up to about a thousand roundings a term.
//   - Multiclass, when Capabilities().Multiclass, and WarmStart, when
//     Capabilities().WarmStart: see multiclass.go.
//   - Persist, when Capabilities().Persist: see persist.go.
package frameworktest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
)

type config struct {
	options map[string]string
	n, p    int
	gradTol float64
	noSkill bool
	seed    int64
}

// Option configures TestBackend.
type Option func(*config)

// WithOptions sets the backend options of every model the kit builds (e.g.
// fewer epochs, to keep the test fast).
func WithOptions(opts map[string]string) Option {
	return func(c *config) { c.options = opts }
}

// WithSize sets the number of training rows and of inputs (default 96 and
// 4; p must be at least 3).
func WithSize(n, p int) Option { return func(c *config) { c.n, c.p = n, p } }

// WithGradientTolerance sets the tolerance of the finite-difference check:
// |fd - J| <= tol * max(1, |J|) entrywise, with J the largest entry of the
// column checked (default 1e-5).
func WithGradientTolerance(tol float64) Option { return func(c *config) { c.gradTol = tol } }

// WithoutSkillCheck drops the requirement that a fitted model beat the
// constant mean on its own training rows (for deliberately weak models).
func WithoutSkillCheck() Option { return func(c *config) { c.noSkill = true } }

// WithSeed sets the seed of the data and the models (default 1).
func WithSeed(seed int64) Option { return func(c *config) { c.seed = seed } }

// TestBackend runs the conformance checks on b, each a subtest of t (a
// *testing.T, or any TB). See the package documentation for what they
// are.
func TestBackend[T TB[T]](t T, b framework.Backend, opts ...Option) {
	t.Helper()
	checkBackend(testT[T]{t}, b, opts)
}

// checkBackend runs the checks of TestBackend and Check.
func checkBackend(t tb, b framework.Backend, opts []Option) {
	t.Helper()
	c := newConfig(t, opts)
	run(t, b, c)
}

func newConfig(t tb, opts []Option) *config {
	t.Helper()
	c := &config{n: 96, p: 4, gradTol: 1e-5, seed: 1}
	for _, o := range opts {
		o(c)
	}
	if c.p < 3 || c.n < 20 {
		t.Fatalf("frameworktest: WithSize(%d, %d): want n >= 20 and p >= 3", c.n, c.p)
	}
	return c
}

// TestEquivalent checks that got behaves as want, as a backend served by a
// plugin must behave as the backend itself: the same capabilities and
// options, bit-identical predictions of models fitted with the same spec
// and data, and an unknown option refused with an error wrapping
// framework.ErrUsage. The options (WithOptions, WithSize, WithSeed) apply
// as for TestBackend.
func TestEquivalent[T TB[T]](t T, want, got framework.Backend, opts ...Option) {
	t.Helper()
	tt := testT[T]{t}
	checkEquivalent(tt, want, got, newConfig(tt, opts))
}

func run(t tb, b framework.Backend, c *config) {
	t.run("Describe", func(t tb) { checkDescribe(t, b, c) })
	tasks := []framework.Task{framework.Regression}
	if b.Capabilities().Classification {
		tasks = append(tasks, framework.Binary)
	}
	for _, task := range tasks {
		name := "Regression"
		if task == framework.Binary {
			name = "Binary"
		}
		t.run(name, func(t tb) { checkFitPredict(t, b, c, task) })
	}
	t.run("Deterministic", func(t tb) { checkDeterministic(t, b, c) })
	t.run("Concurrent", func(t tb) { checkConcurrent(t, b, c) })
	caps := b.Capabilities()
	if caps.Gradients {
		for _, task := range tasks {
			t.run("Gradients/"+task.String(), func(t tb) { checkGradients(t, b, c, task) })
		}
	}
	if caps.Kernel {
		for _, task := range tasks {
			t.run("Kernel/"+task.String(), func(t tb) { checkKernel(t, b, c, task) })
		}
	}
	if caps.MatrixFree {
		for _, task := range tasks {
			t.run("MatrixFree/"+task.String(), func(t tb) { checkMatrixFree(t, b, c, task) })
		}
	}
	runMulticlass(t, b, c)
	runWarmStart(t, b, c, tasks)
	runPersist(t, b, c, tasks)
}

// dataset returns n rows of p standard normal inputs and a response: a
// smooth regression function with noise, or 0/1 drawn from its logistic.
func dataset(n, p int, seed int64, task framework.Task) (*mat.Dense, []float64) {
	rng := rand.New(rand.NewPCG(uint64(seed), 0xc0f0))
	x := mat.NewDense(n, p, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		r := x.RawRowView(i)
		for k := range r {
			r[k] = rng.NormFloat64()
		}
		f := 1.5*r[0] - r[1] + math.Sin(2*r[2]) + 0.5*r[0]*r[1]
		if task == framework.Binary {
			if rng.Float64() < 1/(1+math.Exp(-2*f)) {
				y[i] = 1
			}
		} else {
			y[i] = 3 + f + 0.3*rng.NormFloat64()
		}
	}
	return x, y
}

func (c *config) spec(task framework.Task) framework.ModelSpec {
	return framework.ModelSpec{Task: task, Inputs: c.p, Seed: c.seed, Options: c.options}
}

// fitted returns a model fitted on the kit's training data and the data.
func fitted(t tb, b framework.Backend, c *config, task framework.Task) (framework.Model, *mat.Dense, []float64) {
	t.Helper()
	m, err := b.New(context.Background(), c.spec(task))
	if err != nil {
		t.Fatalf("New(%s): %v", task, err)
	}
	t.Cleanup(func() { _ = framework.Release(m) })
	x, y := dataset(c.n, c.p, c.seed, task)
	if err := m.Fit(context.Background(), x, y); err != nil {
		t.Fatalf("Fit(%s): %v", task, err)
	}
	return m, x, y
}

func checkDescribe(t tb, b framework.Backend, c *config) {
	caps := b.Capabilities()
	if caps.Kernel && !caps.Gradients {
		t.Errorf("Capabilities %v: Kernel without Gradients", caps)
	}
	if caps.SingleKernel && !caps.Kernel {
		t.Errorf("Capabilities %v: SingleKernel without Kernel", caps)
	}
	seen := map[string]bool{}
	for _, o := range b.Options() {
		switch {
		case o.Name == "":
			t.Errorf("an option has no name: %+v", o)
		case seen[o.Name]:
			t.Errorf("option %q listed twice", o.Name)
		case o.Usage == "":
			t.Errorf("option %q has no usage text", o.Name)
		}
		seen[o.Name] = true
	}
	bad := map[string]string{"frameworktest-no-such-option": "1"}
	for k, v := range c.options {
		bad[k] = v
	}
	spec := c.spec(framework.Regression)
	spec.Options = bad
	if m, err := b.New(context.Background(), spec); !errors.Is(err, framework.ErrUsage) {
		if err == nil {
			_ = framework.Release(m)
		}
		t.Errorf("New with an unknown option: want an error wrapping framework.ErrUsage, got %v", err)
	}
	spec = c.spec(framework.Regression)
	spec.Inputs = 0
	if m, err := b.New(context.Background(), spec); !errors.Is(err, framework.ErrUsage) {
		if err == nil {
			_ = framework.Release(m)
		}
		t.Errorf("New with Inputs 0: want an error wrapping framework.ErrUsage, got %v", err)
	}
}

func checkFitPredict(t tb, b framework.Backend, c *config, task framework.Task) {
	m, err := b.New(context.Background(), c.spec(task))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	defer framework.Release(m)
	ctx := context.Background()
	x, y := dataset(c.n, c.p, c.seed, task)
	x0, y0 := mat.DenseCopyOf(x), append([]float64(nil), y...)
	if _, err := m.Predict(ctx, x); err == nil {
		t.Errorf("Predict before Fit: want an error")
	}
	if err := m.Fit(ctx, x, y); err != nil {
		t.Fatalf("Fit: %v", err)
	}
	pred, err := m.Predict(ctx, x)
	if err != nil {
		t.Fatalf("Predict: %v", err)
	}
	if !mat.Equal(x, x0) || !equalSlices(y, y0) {
		t.Errorf("Fit or Predict modified its inputs")
	}
	checkPredictions(t, "Predict(train)", pred, c.n, task)
	xt, _ := dataset(c.n/2+1, c.p, c.seed+1, task)
	pt, err := m.Predict(ctx, xt)
	if err != nil {
		t.Fatalf("Predict(new rows): %v", err)
	}
	checkPredictions(t, "Predict(new rows)", pt, c.n/2+1, task)
	one, err := m.Predict(ctx, xt.Slice(0, 1, 0, c.p))
	if err != nil {
		t.Fatalf("Predict(one row, a view): %v", err)
	}
	// A row alone and in a batch may be computed in other summation orders
	// (BLAS kernels choose by the number of rows: OpenBLAS's SSE2 dgemm,
	// say), so they agree to rounding, not bit for bit. Assumed: the
	// prediction is float64 arithmetic through at most a few dozen sums of
	// at most a few thousand terms, its intermediates within 1e3 of its
	// size; reordering them moves it by at most about 1e3 * 1e3 * 2^-53 ~
	// 1e-10 relative. A model that ignores a view's stride, or lets rows
	// depend on their batch, misses by far more.
	if d := math.Abs(one.At(0, 0) - pt.At(0, 0)); !(d <= oneRowTol*math.Max(1, math.Abs(pt.At(0, 0)))) {
		t.Errorf("Predict of one row (a submatrix view): want %v as in the batch (to %g relative), got %v", pt.At(0, 0), oneRowTol, one.At(0, 0))
	}
	if _, err := m.Predict(ctx, mat.NewDense(2, c.p+1, nil)); err == nil {
		t.Errorf("Predict with %d columns for %d inputs: want an error", c.p+1, c.p)
	}
	if c.noSkill {
		return
	}
	var mean, sse, sst float64
	for _, v := range y {
		mean += v
	}
	mean /= float64(len(y))
	for i, v := range y {
		sse += (v - pred.At(i, 0)) * (v - pred.At(i, 0))
		sst += (v - mean) * (v - mean)
	}
	if !(sse < sst) {
		t.Errorf("training squared error %.4g is not below the constant mean's %.4g", sse, sst)
	}
}

// oneRowTol is the relative tolerance between a row's prediction alone and
// in a batch (see checkFitPredict).
const oneRowTol = 1e-9

func checkPredictions(t tb, what string, pred *mat.Dense, n int, task framework.Task) {
	t.Helper()
	if r, c := pred.Dims(); r != n || c != 1 {
		t.Fatalf("%s: want %dx1 predictions, got %dx%d", what, n, r, c)
	}
	for i := 0; i < n; i++ {
		v := pred.At(i, 0)
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("%s: row %d: prediction %v", what, i, v)
		}
		if task == framework.Binary && (v < 0 || v > 1) {
			t.Fatalf("%s: row %d: probability %v outside [0, 1]", what, i, v)
		}
	}
}

func checkDeterministic(t tb, b framework.Backend, c *config) {
	m1, x, _ := fitted(t, b, c, framework.Regression)
	m2, _, _ := fitted(t, b, c, framework.Regression)
	ctx := context.Background()
	p1, err := m1.Predict(ctx, x)
	if err != nil {
		t.Fatal(err)
	}
	p2, err := m2.Predict(ctx, x)
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(p1, p2) {
		t.Errorf("two models with seed %d give different predictions (largest difference %.3g)", c.seed, maxAbsDiff(p1, p2))
	}
}

func checkConcurrent(t tb, b framework.Backend, c *config) {
	m, x, _ := fitted(t, b, c, framework.Regression)
	ctx := context.Background()
	want, err := m.Predict(ctx, x)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := m.Predict(ctx, x)
			if err == nil && !mat.Equal(got, want) {
				err = errors.New("concurrent Predict differs from a lone call")
			}
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func checkGradients(t tb, b framework.Backend, c *config, task framework.Task) {
	m, x, _ := fitted(t, b, c, task)
	g, ok := framework.As[framework.Gradienter](m)
	if !ok {
		t.Fatalf("Capabilities say Gradients, but the model (%T) is not a framework.Gradienter", m)
	}
	ctx := context.Background()
	xs := x.Slice(0, min(c.n, 24), 0, c.p).(*mat.Dense)
	n, _ := xs.Dims()
	M := g.NumParams()
	if M < 1 {
		t.Fatalf("NumParams %d", M)
	}
	jac, err := g.Jacobian(ctx, xs)
	if err != nil {
		t.Fatalf("Jacobian: %v", err)
	}
	if r, cc := jac.Dims(); r != n || cc != M {
		t.Fatalf("Jacobian: want %dx%d, got %dx%d", n, M, r, cc)
	}
	base, err := g.Predict(ctx, xs)
	if err != nil {
		t.Fatal(err)
	}
	zero, err := g.PredictShifted(ctx, xs, make([]float64, M))
	if err != nil {
		t.Fatalf("PredictShifted: %v", err)
	}
	if !mat.EqualApprox(zero, base, 1e-12) {
		t.Errorf("PredictShifted at dtheta = 0 differs from Predict by %.3g", maxAbsDiff(zero, base))
	}
	if _, err := g.PredictShifted(ctx, xs, make([]float64, M+1)); err == nil {
		t.Errorf("PredictShifted with %d shifts for %d parameters: want an error", M+1, M)
	}
	checkJacobianByDifferences(t, c, g, jacobianAt{xs: xs, jac: jac, k: 1}, 0xd1, nil)
}

// jacobianAt is a model's Jacobian jac at the rows xs, k stacked rows per
// sample (row i*k + j for output j).
type jacobianAt struct {
	xs, jac *mat.Dense
	k       int
}

// checkJacobianByDifferences compares the Jacobian at of g with central
// differences of PredictShifted along up to 24 coordinate directions spread
// over the parameters and one random direction; check, when set, looks at
// every shifted prediction.
func checkJacobianByDifferences(t tb, c *config, g framework.Gradienter, at jacobianAt, stream uint64, check func(*mat.Dense)) {
	t.Helper()
	xs, jac, k := at.xs, at.jac, at.k
	ctx := context.Background()
	M := g.NumParams()
	const h = 1e-6
	fd := func(dir []float64) []float64 {
		plus, minus := make([]float64, M), make([]float64, M)
		for i, v := range dir {
			plus[i], minus[i] = h*v, -h*v
		}
		pp, err := g.PredictShifted(ctx, xs, plus)
		if err != nil {
			t.Fatal(err)
		}
		pm, err := g.PredictShifted(ctx, xs, minus)
		if err != nil {
			t.Fatal(err)
		}
		if check != nil {
			check(pp)
		}
		a, b := flat(pp), flat(pm)
		for i := range a {
			a[i] = (a[i] - b[i]) / (2 * h)
		}
		return a
	}
	compare := func(what string, got, want []float64) {
		scale := 1.0
		for _, v := range want {
			scale = math.Max(scale, math.Abs(v))
		}
		for i := range got {
			if d := math.Abs(got[i] - want[i]); !(d <= c.gradTol*scale) {
				t.Errorf("%s, row %d (sample %d, output %d): finite difference %.8g, Jacobian %.8g (tolerance %.2g)", what, i, i/k, i%k, got[i], want[i], c.gradTol*scale)
				return
			}
		}
	}
	checks := min(M, 24)
	for s := 0; s < checks; s++ {
		i := s * (M - 1) / max(checks-1, 1)
		dir := make([]float64, M)
		dir[i] = 1
		compare(fmt.Sprintf("parameter %d of %d", i, M), fd(dir), mat.Col(nil, i, jac))
	}
	rng := rand.New(rand.NewPCG(uint64(c.seed), stream))
	dir := make([]float64, M)
	for i := range dir {
		dir[i] = rng.NormFloat64() / math.Sqrt(float64(M))
	}
	var jv mat.VecDense
	jv.MulVec(jac, mat.NewVecDense(M, dir))
	compare("a random direction", fd(dir), jv.RawVector().Data)
}

func checkKernel(t tb, b framework.Backend, c *config, task framework.Task) {
	m, x, _ := fitted(t, b, c, task)
	kr, ok := framework.As[framework.Kerneler](m)
	if !ok {
		t.Fatalf("Capabilities say Kernel, but the model (%T) is not a framework.Kerneler", m)
	}
	g, ok := framework.As[framework.Gradienter](m)
	if !ok {
		t.Fatalf("Capabilities say Kernel, but the model (%T) is not a framework.Gradienter", m)
	}
	ctx := context.Background()
	x1 := x.Slice(0, 20, 0, c.p).(*mat.Dense)
	x2 := x.Slice(20, 33, 0, c.p).(*mat.Dense)
	j1 := checkKernelAgainstJacobian(t, g, kr, x1, x2)
	rng := rand.New(rand.NewPCG(uint64(c.seed), 0xa))
	a := make([]float64, 20)
	for i := range a {
		a[i] = rng.NormFloat64()
	}
	jta, err := kr.JacobianTVec(ctx, x1, a)
	if err != nil {
		t.Fatalf("JacobianTVec: %v", err)
	}
	var want mat.VecDense
	want.MulVec(j1.T(), mat.NewVecDense(20, a))
	if len(jta) != g.NumParams() {
		t.Fatalf("JacobianTVec: want length %d, got %d", g.NumParams(), len(jta))
	}
	checkClose(t, "JacobianTVec against J^T a", mat.NewDense(len(jta), 1, jta), mat.NewDense(len(jta), 1, want.RawVector().Data))
	if b.Capabilities().SingleKernel {
		checkSingleKernel(t, m, g, x1, x2, j1, a)
	}
}

// checkSingleKernel: the model's single-precision kernel and transposed
// product are J1 J2^T, J1 J1^T (exactly symmetric) and J1^T a to 1e-4 of
// the largest element of |J1| |J2|^T, |J1| |J1|^T and |J1|^T |a|, as the
// single-precision products (checkSingle).
func checkSingleKernel(t tb, m framework.Model, g framework.Gradienter, x1, x2 *mat.Dense, j1 *mat.Dense, a []float64) {
	sk, ok := framework.As[framework.SingleKerneler](m)
	if !ok {
		t.Fatalf("Capabilities say SingleKernel, but the model (%T) is not a framework.SingleKerneler", m)
	}
	kr := sk.SingleKernel()
	ctx := context.Background()
	j2, err := g.Jacobian(ctx, x2)
	if err != nil {
		t.Fatal(err)
	}
	k12, err := kr.Kernel(ctx, x1, x2)
	if err != nil {
		t.Fatalf("single-precision Kernel(x1, x2): %v", err)
	}
	checkSingleClose(t, "Kernel(x1, x2) against J1 J2^T", k12, j1, j2.T())
	k11, err := kr.Kernel(ctx, x1, nil)
	if err != nil {
		t.Fatalf("single-precision Kernel(x1, nil): %v", err)
	}
	checkSingleClose(t, "Kernel(x1, nil) against J1 J1^T", k11, j1, j1.T())
	if !mat.Equal(k11, k11.T()) {
		t.Errorf("single-precision Kernel(x1, nil) is not exactly symmetric")
	}
	jta, err := kr.JacobianTVec(ctx, x1, a)
	if err != nil {
		t.Fatalf("single-precision JacobianTVec: %v", err)
	}
	if len(jta) != g.NumParams() {
		t.Fatalf("single-precision JacobianTVec: want length %d, got %d", g.NumParams(), len(jta))
	}
	checkSingleClose(t, "JacobianTVec against J^T a", mat.NewDense(len(jta), 1, jta), j1.T(), mat.NewDense(len(a), 1, a))
}

func checkMatrixFree(t tb, b framework.Backend, c *config, task framework.Task) {
	m, x, _ := fittedTask(t, b, c, task)
	jm, ok := framework.As[framework.JacobianMultiplier](m)
	if !ok {
		t.Fatalf("Capabilities say MatrixFree, but the model (%T) is not a framework.JacobianMultiplier", m)
	}
	g, ok := framework.As[framework.Gradienter](m)
	if !ok {
		t.Fatalf("Capabilities say MatrixFree, but the model (%T) is not a framework.Gradienter", m)
	}
	ctx := context.Background()
	x1 := x.Slice(0, 20, 0, c.p).(*mat.Dense)
	j, err := g.Jacobian(ctx, x1)
	if err != nil {
		t.Fatalf("Jacobian: %v", err)
	}
	rows, params := j.Dims()
	if pp, ok := framework.As[framework.PreparedPredictor](m); ok {
		// Prepared before the products below, which are then checked on
		// what it kept.
		checkPrepared(t, m, pp, x1)
	}
	rng := rand.New(rand.NewPCG(uint64(c.seed), 0xb))
	v, u := mat.NewDense(params, 3, nil), mat.NewDense(rows, 3, nil)
	for _, d := range []*mat.Dense{v, u} {
		raw := d.RawMatrix().Data
		for i := range raw {
			raw[i] = rng.NormFloat64()
		}
	}
	got, err := jm.JacobianMul(ctx, x1, v)
	if err != nil {
		t.Fatalf("JacobianMul: %v", err)
	}
	var want mat.Dense
	want.Mul(j, v)
	checkClose(t, "JacobianMul against J V", got, &want)
	if got, err = jm.JacobianTMul(ctx, x1, u); err != nil {
		t.Fatalf("JacobianTMul: %v", err)
	}
	want.Reset()
	want.Mul(j.T(), u)
	checkClose(t, "JacobianTMul against J^T U", got, &want)
	if b.Capabilities().SinglePrecision {
		checkSingle(t, m, x1, j, v, u)
	}
}

// checkSingle: the model's single-precision products are J V and J^T U to
// 1e-4 of the largest element of |J| |V| and |J|^T |U|.
func checkSingle(t tb, m framework.Model, x *mat.Dense, j, v, u *mat.Dense) {
	sp, ok := framework.As[framework.SinglePrecisioner](m)
	if !ok {
		t.Fatalf("Capabilities say SinglePrecision, but the model (%T) is not a framework.SinglePrecisioner", m)
	}
	s := sp.SinglePrecision()
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		jt   mat.Matrix
		w    *mat.Dense
		mul  func(context.Context, mat.Matrix, *mat.Dense) (*mat.Dense, error)
	}{
		{"JacobianMul", j, v, s.JacobianMul},
		{"JacobianTMul", j.T(), u, s.JacobianTMul},
	} {
		got, err := tc.mul(ctx, x, tc.w)
		if err != nil {
			t.Fatalf("single-precision %s: %v", tc.name, err)
		}
		checkSingleClose(t, tc.name, got, tc.jt, tc.w)
	}
	if pp, ok := s.(framework.PreparedPredictor); ok {
		checkSinglePrepared(t, m, pp, x)
	}
}

// checkSinglePrepared: the single-precision view's PredictPrepared(x) is
// Predict(x) to 1e-4 of the largest prediction (at least 1), as
// checkSingleClose allows its products.
func checkSinglePrepared(t tb, m framework.Model, pp framework.PreparedPredictor, x *mat.Dense) {
	got, want := preparedAndPredicted(t, "single-precision PredictPrepared", m, pp, x)
	scale := math.Max(1, mat.Norm(want, math.Inf(1)))
	if d := maxAbsDiff(got, want); !(d <= 1e-4*scale) {
		t.Errorf("single-precision PredictPrepared: largest difference %.3g from Predict, above 1e-4 of %.3g", d, scale)
	}
}

// preparedAndPredicted returns pp.PredictPrepared of a fresh copy of x and
// m.Predict(x), of the same shape (what names the first in failures).
func preparedAndPredicted(t tb, what string, m framework.Model, pp framework.PreparedPredictor, x *mat.Dense) (got, want *mat.Dense) {
	ctx := context.Background()
	got, err := pp.PredictPrepared(ctx, mat.DenseCopyOf(x))
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if want, err = m.Predict(ctx, x); err != nil {
		t.Fatalf("Predict: %v", err)
	}
	wr, wc := want.Dims()
	if gr, gc := got.Dims(); gr != wr || gc != wc {
		t.Fatalf("%s: want %dx%d, got %dx%d", what, wr, wc, gr, gc)
	}
	return got, want
}

// checkSingleClose: got is l r to 1e-4 of the largest element of |l| |r|
// (float32's rounding, 6e-8, over up to about a thousand roundings a
// term).
func checkSingleClose(t tb, what string, got *mat.Dense, l, r mat.Matrix) {
	t.Helper()
	abs := func(a mat.Matrix) *mat.Dense {
		var d mat.Dense
		d.Apply(func(_, _ int, v float64) float64 { return math.Abs(v) }, a)
		return &d
	}
	var want, scale mat.Dense
	want.Mul(l, r)
	scale.Mul(abs(l), abs(r))
	wr, wc := want.Dims()
	if gr, gc := got.Dims(); gr != wr || gc != wc {
		t.Fatalf("single-precision %s: want %dx%d, got %dx%d", what, wr, wc, gr, gc)
	}
	if d := maxAbsDiff(got, &want); !(d <= 1e-4*mat.Max(&scale)) {
		t.Errorf("single-precision %s: largest difference %.3g, above 1e-4 of %.3g", what, d, mat.Max(&scale))
	}
}

// checkPrepared: PredictPrepared(x) is Predict(x) to the bit (x a fresh
// copy of the rows the products are checked on next).
func checkPrepared(t tb, m framework.Model, pp framework.PreparedPredictor, x *mat.Dense) {
	got, want := preparedAndPredicted(t, "PredictPrepared", m, pp, x)
	if !mat.Equal(got, want) {
		t.Errorf("PredictPrepared differs from Predict: largest difference %.3g", maxAbsDiff(got, want))
	}
}

func checkClose(t tb, what string, got, want *mat.Dense) {
	t.Helper()
	gr, gc := got.Dims()
	wr, wc := want.Dims()
	if gr != wr || gc != wc {
		t.Fatalf("%s: want %dx%d, got %dx%d", what, wr, wc, gr, gc)
	}
	scale := math.Max(1, mat.Norm(want, math.Inf(1)))
	if d := maxAbsDiff(got, want); !(d <= 1e-9*scale) {
		t.Errorf("%s: largest difference %.3g (scale %.3g)", what, d, scale)
	}
}

// checkEquivalent compares the backend remote with local (see
// TestEquivalent).
func checkEquivalent(t tb, local, remote framework.Backend, c *config) {
	lc, rc := local.Capabilities(), remote.Capabilities()
	if lc != rc {
		t.Errorf("capabilities: want %v, got %v", lc, rc)
	}
	lo, ro := local.Options(), remote.Options()
	if len(lo) != len(ro) {
		t.Errorf("options: want %d, got %d", len(lo), len(ro))
	} else {
		for i := range lo {
			if lo[i] != ro[i] {
				t.Errorf("option %d: want %+v, got %+v", i, lo[i], ro[i])
			}
		}
	}
	ml, x, _ := fitted(t, local, c, framework.Regression)
	mr, _, _ := fitted(t, remote, c, framework.Regression)
	ctx := context.Background()
	pl, err := ml.Predict(ctx, x)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := mr.Predict(ctx, x)
	if err != nil {
		t.Fatalf("Predict: %v", err)
	}
	if !mat.Equal(pl, pr) {
		t.Errorf("predictions differ from the reference backend's by up to %.3g", maxAbsDiff(pl, pr))
	}
	spec := c.spec(framework.Regression)
	spec.Options = map[string]string{"frameworktest-no-such-option": "1"}
	if _, err := remote.New(ctx, spec); !errors.Is(err, framework.ErrUsage) {
		t.Errorf("New with an unknown option: want an error wrapping framework.ErrUsage, got %v", err)
	}
}

func maxAbsDiff(a, b mat.Matrix) float64 {
	r, c := a.Dims()
	d := 0.0
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			v := math.Abs(a.At(i, j) - b.At(i, j))
			if math.IsNaN(v) {
				return math.NaN()
			}
			d = math.Max(d, v)
		}
	}
	return d
}

func equalSlices(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// checkKernelAgainstJacobian checks Kernel(x1, x2) and Kernel(x1, nil)
// against the products of the materialised Jacobians, and the symmetric
// one for exact symmetry; it returns J(x1).
func checkKernelAgainstJacobian(t tb, g framework.Gradienter, kr framework.Kerneler, x1, x2 *mat.Dense) *mat.Dense {
	t.Helper()
	ctx := context.Background()
	j1, err := g.Jacobian(ctx, x1)
	if err != nil {
		t.Fatal(err)
	}
	j2, err := g.Jacobian(ctx, x2)
	if err != nil {
		t.Fatal(err)
	}
	var want12, want11 mat.Dense
	want12.Mul(j1, j2.T())
	want11.Mul(j1, j1.T())
	k12, err := kr.Kernel(ctx, x1, x2)
	if err != nil {
		t.Fatalf("Kernel(x1, x2): %v", err)
	}
	checkClose(t, "Kernel(x1, x2) against J1 J2^T", k12, &want12)
	k11, err := kr.Kernel(ctx, x1, nil)
	if err != nil {
		t.Fatalf("Kernel(x1, nil): %v", err)
	}
	checkClose(t, "Kernel(x1, nil) against J1 J1^T", k11, &want11)
	if !mat.Equal(k11, k11.T()) {
		t.Errorf("Kernel(x1, nil) is not exactly symmetric")
	}
	return j1
}
