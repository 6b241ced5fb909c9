package mlp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/backends/internal/nn"
	"github.com/lazyvi/lazyvi/framework"
)

var ctx = context.Background()

var tasks = []framework.Task{framework.Regression, framework.Binary}

// blockName names the parameter block that flat index k falls in.
func blockName(md *Model, k int) string {
	for l, ly := range md.layers {
		switch {
		case k >= ly.w && k < ly.b:
			return fmt.Sprintf("W%d[%d,%d]", l+1, (k-ly.w)/ly.in, (k-ly.w)%ly.in)
		case k >= ly.b && k < ly.b+ly.out:
			return fmt.Sprintf("b%d[%d]", l+1, k-ly.b)
		}
	}
	return "?"
}

func TestNumParams(t *testing.T) {
	for _, tc := range []struct {
		p      int
		hidden string
		want   int
	}{
		{p: 100, hidden: "50", want: 5101}, // m p + 2m + 1, ALGORITHMS.md
		{p: 6, hidden: "50", want: 401},
		{p: 3, hidden: "5,4", want: 3*5 + 5 + 5*4 + 4 + 4 + 1},
	} {
		md, err := NewModel(framework.ModelSpec{Inputs: tc.p, Options: map[string]string{"hidden": tc.hidden}})
		if err != nil {
			t.Fatal(err)
		}
		if got := md.NumParams(); got != tc.want {
			t.Errorf("p=%d hidden=%s: want %d parameters, got %d", tc.p, tc.hidden, tc.want, got)
		}
	}
}

// TestGradientFiniteDifferences checks the Jacobian of the prediction
// against central finite differences of PredictShifted, entry by entry and
// for every parameter block of a two-hidden-layer net (multiclass: a
// row per sample and class, i*K + k, the class probabilities').
func TestGradientFiniteDifferences(t *testing.T) {
	for _, task := range append(tasks, framework.Multiclass) {
		t.Run(task.String(), func(t *testing.T) {
			md, x := smallProblem(t, task, "5,4", 6)
			jac, err := md.Jacobian(ctx, x)
			if err != nil {
				t.Fatal(err)
			}
			n, _ := jac.Dims()
			theta := md.Params()
			f := func(y, th []float64) {
				d := make([]float64, len(th))
				floats.SubTo(d, th, theta)
				pred, err := md.PredictShifted(ctx, x, d)
				if err != nil {
					panic(err)
				}
				copy(y, pred.RawMatrix().Data)
			}
			num := mat.NewDense(n, md.NumParams(), nil)
			// The step keeps the truncation error (the network is piecewise
			// polynomial of degree <= 3 in theta away from ReLU kinks, so
			// O(h^2 |f'''|) ~ 1e-10 for outputs of order 10) and the rounding
			// error (eps |f| / h ~ 1e-16 * 10 / 1e-5 = 1e-10) both far below
			// the tolerance 1e-7 relative to the largest gradient entry. No
			// pre-activation of this seeded problem lies within 1e-5 of a
			// kink, else whole blocks would be off by O(1).
			fd.Jacobian(num, f, theta, &fd.JacobianSettings{Formula: fd.Central, Step: 1e-5})
			scale := maxAbs(jac.RawMatrix().Data)
			seen := map[string]bool{}
			for i := 0; i < n; i++ {
				for k := 0; k < md.NumParams(); k++ {
					b := blockName(md, k)
					seen[b[:2]] = true
					if got, want := jac.At(i, k), num.At(i, k); math.Abs(got-want) > 1e-7*scale {
						t.Errorf("sample %d, %s: want %.10g (finite differences), got %.10g", i, b, want, got)
					}
				}
			}
			for _, b := range []string{"W1", "b1", "W2", "b2", "W3", "b3"} {
				if !seen[b] {
					t.Errorf("block %s not checked", b)
				}
			}
			// Every block has non-zero gradients somewhere, or the check
			// proves little.
			for l, ly := range md.layers {
				var w, b float64
				for i := 0; i < n; i++ {
					row := jac.RawRowView(i)
					w = math.Max(w, maxAbs(row[ly.w:ly.b]))
					b = math.Max(b, maxAbs(row[ly.b:ly.b+ly.out]))
				}
				if w == 0 || b == 0 {
					t.Errorf("layer %d: all-zero gradient block (W %g, b %g)", l+1, w, b)
				}
			}
		})
	}
}

// relErr is max |got - want| / max |want|.
func relErr(got, want []float64) float64 {
	d := make([]float64, len(got))
	floats.SubTo(d, got, want)
	return maxAbs(d) / maxAbs(want)
}

// TestKernelAndJacobianTVec compares the structured kernel and transposed
// product with the materialised Jacobian. Both sides sum the same products
// in different orders, so they agree to rounding: 1e-10 relative leaves
// four orders of magnitude of room above the ~1e-14 observed. Multiclass
// has 3 Jacobian rows per sample (the kernel's blocks of 256 rows end
// inside a sample's).
func TestKernelAndJacobianTVec(t *testing.T) {
	for _, task := range append(tasks, framework.Multiclass) {
		for _, hidden := range []string{"8", "5,4", "6,5,3"} {
			t.Run(task.String()+"/"+hidden, func(t *testing.T) {
				// 300 rows: more than one kernel block of 256.
				md, x1 := smallProblem(t, task, hidden, 300)
				x2 := mat.DenseCopyOf(x1.Slice(17, 87, 0, 3))
				j1, _ := md.Jacobian(ctx, x1)
				j2, _ := md.Jacobian(ctx, x2)
				rows, _ := j1.Dims()
				rows2, _ := j2.Dims()

				var want mat.Dense
				want.Mul(j1, j1.T())
				got, err := md.Kernel(ctx, x1, nil)
				if err != nil {
					t.Fatal(err)
				}
				if e := relErr(got.RawMatrix().Data, want.RawMatrix().Data); e > 1e-10 {
					t.Errorf("symmetric kernel: relative error %g", e)
				}
				if !mat.Equal(got, got.T()) {
					t.Errorf("symmetric kernel is not exactly symmetric")
				}

				want.Reset()
				want.Mul(j1, j2.T())
				got, err = md.Kernel(ctx, x1, x2)
				if err != nil {
					t.Fatal(err)
				}
				if r, c := got.Dims(); r != rows || c != rows2 {
					t.Fatalf("cross kernel: want %d x %d, got %d x %d", rows, rows2, r, c)
				}
				if e := relErr(got.RawMatrix().Data, want.RawMatrix().Data); e > 1e-10 {
					t.Errorf("cross kernel: relative error %g", e)
				}

				rng := rand.New(rand.NewPCG(3, 3))
				a := make([]float64, rows)
				for i := range a {
					a[i] = rng.NormFloat64()
				}
				xBefore := mat.DenseCopyOf(x1)
				gotV, err := md.JacobianTVec(ctx, x1, a)
				if err != nil {
					t.Fatal(err)
				}
				wantV := mat.NewVecDense(md.NumParams(), nil)
				wantV.MulVec(j1.T(), mat.NewVecDense(rows, a))
				if e := relErr(gotV, wantV.RawVector().Data); e > 1e-10 {
					t.Errorf("JacobianTVec: relative error %g", e)
				}
				if !mat.Equal(x1, xBefore) {
					t.Errorf("JacobianTVec modified its input")
				}
			})
		}
	}
}

// TestPredictShifted checks dtheta = 0 (exactly Predict: theta + 0 is
// theta) and the first-order expansion for a small random dtheta.
func TestPredictShifted(t *testing.T) {
	for _, task := range tasks {
		t.Run(task.String(), func(t *testing.T) {
			md, x := smallProblem(t, task, "5,4", 50)
			theta := md.Params()
			pred, _ := md.Predict(ctx, x)
			zero, err := md.PredictShifted(ctx, x, make([]float64, md.NumParams()))
			if err != nil {
				t.Fatal(err)
			}
			if !mat.Equal(pred, zero) {
				t.Errorf("PredictShifted(0) differs from Predict")
			}
			jac, _ := md.Jacobian(ctx, x)
			rng := rand.New(rand.NewPCG(5, 5))
			u := make([]float64, md.NumParams())
			for i := range u {
				u[i] = rng.NormFloat64()
			}
			// Remainder of the first-order expansion, relative to the
			// first-order term: O(eps) away from kinks, so it must shrink
			// ~10x per 10x smaller eps. 1e-2 at eps = 1e-4 allows a
			// curvature of 100 relative to the gradient.
			for _, eps := range []float64{1e-4, 1e-5} {
				d := make([]float64, len(u))
				floats.ScaleTo(d, eps, u)
				shifted, _ := md.PredictShifted(ctx, x, d)
				var lin mat.VecDense
				lin.MulVec(jac, mat.NewVecDense(len(d), d))
				var rem mat.Dense
				rem.Sub(shifted, pred)
				r := rem.RawMatrix().Data
				floats.Sub(r, lin.RawVector().Data)
				if e := maxAbs(r) / maxAbs(lin.RawVector().Data); e > 100*eps {
					t.Errorf("eps %g: relative first-order remainder %g", eps, e)
				}
			}
			if !floats.Equal(theta, md.Params()) {
				t.Errorf("PredictShifted changed the parameters")
			}
		})
	}
}

// TestConcurrentUse calls every read method from several goroutines at
// once and compares with serial results (run with -race as well).
func TestConcurrentUse(t *testing.T) {
	md, x := smallProblem(t, framework.Regression, "5,4", 100)
	a := make([]float64, 100)
	for i := range a {
		a[i] = float64(i%7) - 3
	}
	d := make([]float64, md.NumParams())
	for i := range d {
		d[i] = 1e-3 * float64(i%5)
	}
	wantP, _ := md.Predict(ctx, x)
	wantS, _ := md.PredictShifted(ctx, x, d)
	wantK, _ := md.Kernel(ctx, x, nil)
	wantV, _ := md.JacobianTVec(ctx, x, a)
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, _ := md.Predict(ctx, x)
			s, _ := md.PredictShifted(ctx, x, d)
			k, _ := md.Kernel(ctx, x, nil)
			v, _ := md.JacobianTVec(ctx, x, a)
			if !mat.Equal(p, wantP) || !mat.Equal(s, wantS) || !mat.Equal(k, wantK) || !floats.Equal(v, wantV) {
				errs <- "concurrent result differs from serial"
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func TestDeterminism(t *testing.T) {
	for _, task := range tasks {
		t.Run(task.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			var x *mat.Dense
			var y []float64
			if task == framework.Binary {
				x, y, _ = probitData(rng, 500, 4, []float64{2.5, 3.5})
			} else {
				x, y = linearData(rng, 500, 6, 0.9, 0.1)
			}
			opts := map[string]string{"epochs": "30", "hidden": "10,10"}
			a := fitModel(t, task, x, y, 42, opts)
			b := fitModel(t, task, x, y, 42, opts)
			c := fitModel(t, task, x, y, 43, opts)
			if !floats.Equal(a.Params(), b.Params()) {
				t.Errorf("same seed: parameters differ")
			}
			pa, _ := a.Predict(ctx, x)
			pb, _ := b.Predict(ctx, x)
			pc, _ := c.Predict(ctx, x)
			if !mat.Equal(pa, pb) {
				t.Errorf("same seed: predictions differ")
			}
			if mat.Equal(pa, pc) {
				t.Errorf("different seeds: identical predictions")
			}
		})
	}
}

func TestFitErrors(t *testing.T) {
	x := mat.NewDense(4, 2, []float64{1, 2, 3, 4, 5, 6, 7, 8})
	newModel := func(task framework.Task) *Model {
		md, err := NewModel(framework.ModelSpec{Task: task, Inputs: 2})
		if err != nil {
			t.Fatal(err)
		}
		return md
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if err := newModel(framework.Regression).Fit(canceled, x, []float64{1, 2, 3, 4}); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled context: want context.Canceled, got %v", err)
	}
	if err := newModel(framework.Binary).Fit(ctx, x, []float64{0, 1, 2, 1}); !errors.Is(err, framework.ErrUsage) {
		t.Errorf("binary response 2: want usage error, got %v", err)
	}
	if err := newModel(framework.Regression).Fit(ctx, x, []float64{1, 2, 3}); err == nil {
		t.Errorf("3 responses for 4 rows: want error")
	}
	if err := newModel(framework.Regression).Fit(ctx, mat.NewDense(4, 3, nil), []float64{1, 2, 3, 4}); err == nil {
		t.Errorf("3 columns for 2 inputs: want error")
	}
	if _, err := newModel(framework.Regression).Predict(ctx, x); err == nil {
		t.Errorf("Predict before Fit: want error")
	}
	md := newModel(framework.Regression)
	if err := md.Fit(ctx, x, []float64{1, 1, 1, 1}); err != nil {
		t.Fatalf("constant response: %v", err)
	}
	p, _ := md.Predict(ctx, x)
	if v := p.At(0, 0); math.Abs(v-1) > 0.05 {
		t.Errorf("constant response 1: want prediction near 1, got %v", v)
	}
	if err := md.Fit(ctx, x, []float64{1, 2, 3, 4}); err == nil {
		t.Errorf("second Fit: want error")
	}
}

func TestOptions(t *testing.T) {
	for _, tc := range []struct {
		opts    map[string]string
		wantErr string // option named in the error; "" for success
		check   func(config) bool
	}{
		{opts: nil, check: func(c config) bool {
			return len(c.hidden) == 1 && c.hidden[0] == 50 && c.train.Epochs == DefaultEpochs && c.train.Patience == DefaultPatience &&
				c.train.Tol == DefaultTol && c.train.LR == DefaultLR && c.train.Batch == DefaultBatch
		}},
		{opts: map[string]string{"hidden": "100, 50"}, check: func(c config) bool {
			return len(c.hidden) == 2 && c.hidden[0] == 100 && c.hidden[1] == 50
		}},
		{opts: map[string]string{"epochs": "7", "patience": "2", "tol": "0", "lr": "0.01", "batch": "32"}, check: func(c config) bool {
			return c.train.Epochs == 7 && c.train.Patience == 2 && c.train.Tol == 0 && c.train.LR == 0.01 && c.train.Batch == 32
		}},
		{opts: map[string]string{"width": "50"}, wantErr: "width"},
		{opts: map[string]string{"hidden": ""}, wantErr: "hidden"},
		{opts: map[string]string{"hidden": "50,"}, wantErr: "hidden"},
		{opts: map[string]string{"hidden": "0"}, wantErr: "hidden"},
		{opts: map[string]string{"hidden": "a"}, wantErr: "hidden"},
		{opts: map[string]string{"epochs": "0"}, wantErr: "epochs"},
		{opts: map[string]string{"epochs": "1.5"}, wantErr: "epochs"},
		{opts: map[string]string{"patience": "-1"}, wantErr: "patience"},
		{opts: map[string]string{"batch": "x"}, wantErr: "batch"},
		{opts: map[string]string{"tol": "-1e-4"}, wantErr: "tol"},
		{opts: map[string]string{"tol": "NaN"}, wantErr: "tol"},
		{opts: map[string]string{"lr": "0"}, wantErr: "lr"},
		{opts: map[string]string{"lr": "Inf"}, wantErr: "lr"},
	} {
		cfg, err := parseOptions(tc.opts)
		if tc.wantErr == "" {
			if err != nil {
				t.Errorf("%v: unexpected error %v", tc.opts, err)
			} else if !tc.check(cfg) {
				t.Errorf("%v: got %+v", tc.opts, cfg)
			}
			continue
		}
		_, err = Backend{}.New(ctx, framework.ModelSpec{Inputs: 2, Options: tc.opts})
		if !errors.Is(err, framework.ErrUsage) || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%v: want usage error naming %q, got %v", tc.opts, tc.wantErr, err)
		}
	}
	// Every option parsed is listed, with a default that parses.
	for _, o := range (Backend{}).Options() {
		if _, err := parseOptions(map[string]string{o.Name: o.Default}); err != nil || o.Usage == "" {
			t.Errorf("option %s: default %q: %v", o.Name, o.Default, err)
		}
	}
	for _, spec := range []framework.ModelSpec{{Inputs: 0}, {Task: framework.Task(9), Inputs: 2}} {
		if _, err := NewModel(spec); !errors.Is(err, framework.ErrUsage) {
			t.Errorf("%+v: want usage error, got %v", spec, err)
		}
	}
}

func TestRegistered(t *testing.T) {
	b, err := framework.LookupBackend("mlp")
	if err != nil {
		t.Fatal(err)
	}
	if c := b.Capabilities(); !c.Gradients || !c.Kernel || !c.Classification {
		t.Errorf("capabilities: got %v", c)
	}
	m, err := b.New(ctx, framework.ModelSpec{Inputs: 3})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := framework.As[framework.Kerneler](m); !ok {
		t.Errorf("model is not a Kerneler")
	}
}

// TestInputViews feeds the same rows as a contiguous *mat.Dense, as a
// column view of a wider matrix (stride > columns) and as a matrix without
// raw storage; every method must give identical results.
func TestInputViews(t *testing.T) {
	md, x := smallProblem(t, framework.Binary, "5,4", 40)
	wide := mat.NewDense(40, 5, nil)
	wide.Slice(0, 40, 1, 4).(*mat.Dense).Copy(x)
	var xt mat.Dense
	xt.CloneFrom(x.T())
	a := make([]float64, 40)
	for i := range a {
		a[i] = float64(i) / 40
	}
	want := results(t, md, x, a)
	// Fit reads views the same way: the same seed gives the same parameters.
	y := make([]float64, 40)
	for i := range y {
		y[i] = float64(i % 2)
	}
	opts := map[string]string{"hidden": "5,4", "epochs": "3", "batch": "16"}
	f1 := fitModel(t, framework.Binary, x, y, 3, opts)
	f2 := fitModel(t, framework.Binary, wide.Slice(0, 40, 1, 4).(*mat.Dense), y, 3, opts)
	if !floats.Equal(f1.Params(), f2.Params()) {
		t.Errorf("Fit on a column view: parameters differ from contiguous input")
	}
	for name, in := range map[string]mat.Matrix{
		"column view":   wide.Slice(0, 40, 1, 4),
		"not raw (T^T)": xt.T(),
	} {
		got := results(t, md, in, a)
		for k := range want {
			if !floats.Equal(got[k], want[k]) {
				t.Errorf("%s: result %d differs from contiguous input", name, k)
			}
		}
	}
}

// results returns Predict, Jacobian, Kernel (symmetric and cross) and
// JacobianTVec of x, flattened.
func results(t *testing.T, md *Model, x mat.Matrix, a []float64) [][]float64 {
	t.Helper()
	p, err1 := md.Predict(ctx, x)
	j, err2 := md.Jacobian(ctx, x)
	k, err3 := md.Kernel(ctx, x, nil)
	kx, err4 := md.Kernel(ctx, x, x)
	v, err5 := md.JacobianTVec(ctx, x, a)
	if err := errors.Join(err1, err2, err3, err4, err5); err != nil {
		t.Fatal(err)
	}
	return [][]float64{p.RawMatrix().Data, j.RawMatrix().Data, k.RawMatrix().Data, kx.RawMatrix().Data, v}
}

// The signal memo must be invisible: repeated calls give bit-identical
// results; a caller that overwrites its matrix in place gets the new
// input's results, not the remembered ones; a full budget evicts instead of
// growing; concurrent callers (run with -race) share entries safely.
func TestSignalMemo(t *testing.T) {
	md, x := smallProblem(t, framework.Regression, "5,4", 40)
	a := make([]float64, 40)
	for i := range a {
		a[i] = math.Sin(float64(i))
	}
	first := results(t, md, x, a)
	if md.memo.Len() == 0 {
		t.Fatal("memo empty after kernel and JacobianTVec calls")
	}
	again := results(t, md, x, a)
	for k := range first {
		if !floats.Equal(first[k], again[k]) {
			t.Errorf("result %d differs on a memo hit", k)
		}
	}
	// The same matrix, changed in place: its results must be recomputed.
	x2 := mat.DenseCopyOf(x)
	x2.Set(7, 1, x2.At(7, 1)+0.5)
	want := results(t, &Model{head: md.head, inputs: md.inputs, cfg: md.cfg, layers: md.layers, m: md.m, trained: nn.Trained{Theta: md.trained.Theta, Fitted: true}}, x2, a)
	x.Copy(x2)
	got := results(t, md, x, a)
	for k := range want {
		if !floats.Equal(got[k], want[k]) {
			t.Errorf("result %d after changing the input in place: stale signals", k)
		}
	}
	// A budget of one entry keeps one.
	defer func(b int) { nn.MemoBudget = b }(nn.MemoBudget)
	md.memo.Clear()
	results(t, md, x, a)
	if n := md.memo.Len(); n != 1 {
		t.Fatalf("one input: %d entries", n)
	}
	nn.MemoBudget = md.memo.Bytes()
	results(t, md, x2.Slice(0, 20, 0, 3), a[:20])
	if n, b := md.memo.Len(), md.memo.Bytes(); n != 1 || b > nn.MemoBudget {
		t.Errorf("budget of one entry: %d entries, %d bytes kept", n, b)
	}
	nn.MemoBudget = 64 << 20
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 5; i++ {
				v, err := md.JacobianTVec(ctx, x, a)
				if err != nil || !floats.Equal(v, got[4]) {
					t.Errorf("concurrent JacobianTVec: %v", err)
				}
			}
		}()
	}
	wg.Wait()
}
