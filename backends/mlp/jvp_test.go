package mlp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/backends/internal/nn"
	"github.com/lazyvi/lazyvi/framework"
)

// TestJacobianProducts compares the matrix-free products with the
// materialised Jacobian's, for every task (multiclass: K rows per sample)
// and several depths; the same sums in another order, so 1e-10 relative.
func TestJacobianProducts(t *testing.T) {
	for _, task := range append(tasks, framework.Multiclass) {
		for _, hidden := range []string{"8", "6,5,3"} {
			t.Run(task.String()+"/"+hidden, func(t *testing.T) {
				md, x := smallProblem(t, task, hidden, 120)
				j, err := md.Jacobian(ctx, x)
				if err != nil {
					t.Fatal(err)
				}
				rows, m := j.Dims()
				rng := rand.New(rand.NewPCG(5, 7))
				v := mat.NewDense(m, 3, nil)
				u := mat.NewDense(rows, 3, nil)
				for _, d := range []*mat.Dense{v, u} {
					raw := d.RawMatrix().Data
					for i := range raw {
						raw[i] = rng.NormFloat64()
					}
				}
				xBefore := mat.DenseCopyOf(x)
				var want mat.Dense
				want.Mul(j, v)
				got, err := md.JacobianMul(ctx, x, v)
				if err != nil {
					t.Fatal(err)
				}
				if e := relErr(got.RawMatrix().Data, want.RawMatrix().Data); e > 1e-10 {
					t.Errorf("JacobianMul: relative error %g", e)
				}
				want.Reset()
				want.Mul(j.T(), u)
				got, err = md.JacobianTMul(ctx, x, u)
				if err != nil {
					t.Fatal(err)
				}
				if e := relErr(got.RawMatrix().Data, want.RawMatrix().Data); e > 1e-10 {
					t.Errorf("JacobianTMul: relative error %g", e)
				}
				if !mat.Equal(x, xBefore) {
					t.Errorf("a product modified its input")
				}
				if _, err := md.JacobianMul(ctx, x, mat.NewDense(m+1, 1, nil)); err == nil {
					t.Errorf("JacobianMul accepted %d rows for %d parameters", m+1, m)
				}
			})
		}
	}
}

// TestSinglePrecisionProducts compares the single-precision products with
// the double ones within the bound of their arithmetic: an element of
// Phi v differs by at most gamma_K (absJ |v|)_i, gamma_K = K u / (1 - K
// u) with u = 2^-24, where absJ is the Jacobian of the absolute signals
// (boundPass) and K counts the roundings on a term's way: the float32
// pass's (cJ), then the product's (its three float32 inputs, its product,
// the float32 sum of the layer's in terms, and one more for the float64
// sums), K = cJ + max in + 5; for Phi^T u likewise with the n rows in the
// float32 sum (and the product D u), K = cJ + n + 6. The double products
// are exact to 1e-10 (TestJacobianProducts), far inside that. The
// difference must not be zero (the products did run in float32). A
// multiclass model's products are its double ones.
func TestSinglePrecisionProducts(t *testing.T) {
	for _, task := range append(tasks, framework.Multiclass) {
		for _, hidden := range []string{"8", "6,5,3", "40,20"} {
			t.Run(task.String()+"/"+hidden, func(t *testing.T) {
				md, x := smallProblem(t, task, hidden, 120)
				sp, ok := framework.As[framework.SinglePrecisioner](md)
				if !ok {
					t.Fatal("the model is not a SinglePrecisioner")
				}
				s := sp.SinglePrecision()
				j, err := md.Jacobian(ctx, x)
				if err != nil {
					t.Fatal(err)
				}
				rows, m := j.Dims()
				absJ := absOf(j)
				rng := rand.New(rand.NewPCG(5, 9))
				v := mat.NewDense(m, 2, nil)
				w := mat.NewDense(rows, 2, nil)
				for _, d := range []*mat.Dense{v, w} {
					raw := d.RawMatrix().Data
					for i := range raw {
						raw[i] = rng.NormFloat64()
					}
				}
				maxIn := 0
				for _, ly := range md.layers {
					maxIn = max(maxIn, ly.in)
				}
				for _, tc := range []struct {
					name string
					phi  mat.Matrix // |Phi| or its transpose
					arg  *mat.Dense
					k    int
					mul  func(framework.JacobianMultiplier) (*mat.Dense, error)
				}{
					{"JacobianMul", absJ, v, maxIn + 5, func(jm framework.JacobianMultiplier) (*mat.Dense, error) { return jm.JacobianMul(ctx, x, v) }},
					{"JacobianTMul", absJ.T(), w, rows + 6, func(jm framework.JacobianMultiplier) (*mat.Dense, error) { return jm.JacobianTMul(ctx, x, w) }},
				} {
					want, err := tc.mul(md)
					if err != nil {
						t.Fatal(err)
					}
					got, err := tc.mul(s)
					if err != nil {
						t.Fatal(err)
					}
					if task == framework.Multiclass {
						if !mat.Equal(got, want) {
							t.Errorf("%s: a multiclass model's single-precision products are not its double ones", tc.name)
						}
						continue
					}
					// The products' own roundings on the float32
					// signals, and the signals' (boundPass).
					pb := boundPass(md, x.RawMatrix())
					pb.requireMasks(t)
					phi := mat.Matrix(pb.absJ)
					if tc.name == "JacobianTMul" {
						phi = pb.absJ.T()
					}
					var bound mat.Dense
					bound.Mul(phi, absOf(tc.arg))
					bound.Scale(gamma(tc.k+pb.cJ, u32), &bound)
					checkBound(t, tc.name, got, want, &bound)
				}
			})
		}
	}
}

// TestSingleMemo checks that the float32 pass runs once per memo entry
// and is charged to its budget: half the bytes of the float64 signals
// (the input, activations and deltas) and its float64 outputs. An entry
// that single-precision calls make holds the input's copy and the float32
// pass only.
func TestSingleMemo(t *testing.T) {
	md, x := smallProblem(t, framework.Regression, "5,4", 40)
	md.memo.Clear()
	s := md.SinglePrecision()
	v := mat.NewDense(md.m, 1, nil)
	v.Set(3, 0, 1)
	if _, err := md.JacobianMul(ctx, x, v); err != nil {
		t.Fatal(err)
	}
	before := md.memo.Bytes()
	if _, err := s.JacobianMul(ctx, x, v); err != nil {
		t.Fatal(err)
	}
	want := 8 * 40
	for _, ly := range md.layers {
		want += 4 * 40 * (ly.in + ly.out)
	}
	if got := md.memo.Bytes() - before; got != want {
		t.Errorf("the float32 pass charged %d bytes, want %d", got, want)
	}
	after := md.memo.Bytes()
	if _, err := s.JacobianMul(ctx, x, v); err != nil {
		t.Fatal(err)
	}
	if md.memo.Bytes() != after || md.memo.Len() != 1 {
		t.Errorf("a second single-precision product: %d bytes in %d entries, want %d in 1", md.memo.Bytes(), md.memo.Len(), after)
	}
	// Concurrent first uses (run with -race) run the pass and charge once
	// and give the same products.
	md.memo.Clear()
	u := mat.NewDense(40, 1, nil)
	u.Set(5, 0, 1)
	res := make([]*mat.Dense, 4)
	var wg sync.WaitGroup
	for g := range res {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			if res[g], err = s.JacobianTMul(ctx, mat.DenseCopyOf(x), u); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	for g := 1; g < len(res); g++ {
		if res[g] == nil || !mat.Equal(res[g], res[0]) {
			t.Fatalf("concurrent single-precision products differ")
		}
	}
	_, p := x.Dims()
	if own := 8*40*p + want; md.memo.Bytes() != own || md.memo.Len() != 1 {
		t.Errorf("concurrent first uses: %d bytes in %d entries, want %d in 1", md.memo.Bytes(), md.memo.Len(), own)
	}
}

// TestSingleProductsScratch checks that the single-precision products do
// not depend on the pooled scratch they are given: products on a few rows
// and on many, in turn and from two goroutines at once, equal to the bit
// those of the same calls made first, one at a time.
func TestSingleProductsScratch(t *testing.T) {
	md, x := smallProblem(t, framework.Regression, "40,20", 120)
	few := mat.DenseCopyOf(x.Slice(0, 7, 0, 3))
	s := md.SinglePrecision()
	rng := rand.New(rand.NewPCG(3, 4))
	randDense := func(r, c int) *mat.Dense {
		d := mat.NewDense(r, c, nil)
		for i := range d.RawMatrix().Data {
			d.RawMatrix().Data[i] = rng.NormFloat64()
		}
		return d
	}
	v := randDense(md.NumParams(), 2)
	type call struct {
		x    *mat.Dense
		arg  *mat.Dense
		tran bool
	}
	calls := []call{{x, v, false}, {few, v, false}, {x, randDense(120, 2), true}, {few, randDense(7, 2), true}}
	run := func(c call) (*mat.Dense, error) {
		if c.tran {
			return s.JacobianTMul(ctx, c.x, c.arg)
		}
		return s.JacobianMul(ctx, c.x, c.arg)
	}
	want := make([]*mat.Dense, len(calls))
	for i, c := range calls {
		var err error
		if want[i], err = run(c); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := 0; round < 3; round++ {
				for i := range calls {
					j := (i + g) % len(calls)
					out, err := run(calls[j])
					if err != nil {
						t.Error(err)
						return
					}
					if !mat.Equal(out, want[j]) {
						t.Errorf("goroutine %d, round %d: call %d differs from its first result", g, round, j)
					}
				}
			}
		}()
	}
	wg.Wait()
}

// TestLeanEntries: where an input's float64 signals would take more than
// a leanShare of the memo's budget, its entry keeps only the float64
// pass's outputs (lean), computed by blocks of rows, beside the float32
// pass. The predictions and the float64 products and kernel (from signals
// computed again) are the same to the bit as with the whole entry, and so
// are the single-precision products, kernel and predictions: the float32
// pass depends on the input alone. So are all of them where a
// single-precision call made the entry (the float32 pass only). The
// single-precision numbers are within boundPass's bounds of the float64
// ones. The lean entry is smaller.
func TestLeanEntries(t *testing.T) {
	defer func(b, r int) { nn.MemoBudget, leanBlockRows = b, r }(nn.MemoBudget, leanBlockRows)
	leanBlockRows = 16 // five blocks of rows
	md, x := smallProblem(t, framework.Regression, "6,5", 80)
	m := md.NumParams()
	rng := rand.New(rand.NewPCG(3, 9))
	v := mat.NewDense(m, 2, nil)
	u := mat.NewDense(80, 2, nil)
	for _, d := range []*mat.Dense{v, u} {
		for i := range d.RawMatrix().Data {
			d.RawMatrix().Data[i] = rng.NormFloat64()
		}
	}
	s := md.SinglePrecision()
	sp, ok := s.(framework.PreparedPredictor)
	if !ok {
		t.Fatal("the single-precision view is not a PreparedPredictor")
	}
	xg, err := md.input(x)
	if err != nil {
		t.Fatal(err)
	}
	// results runs the calls on a cleared memo, after the single-precision
	// prediction where singleFirst.
	results := func(singleFirst bool) []*mat.Dense {
		md.memo.Clear()
		if singleFirst {
			if _, err := sp.PredictPrepared(ctx, x); err != nil {
				t.Fatal(err)
			}
			if e := md.cached(xg); e.acts != nil || e.deltas != nil {
				t.Fatal("a single-precision call's entry holds the float64 pass")
			}
		}
		var out []*mat.Dense
		for _, f := range []func() (*mat.Dense, error){
			func() (*mat.Dense, error) { return md.PredictPrepared(ctx, x) },
			func() (*mat.Dense, error) { return s.JacobianMul(ctx, x, v) },
			func() (*mat.Dense, error) { return s.JacobianTMul(ctx, x, u) },
			func() (*mat.Dense, error) { return md.JacobianMul(ctx, x, v) },
			func() (*mat.Dense, error) { return md.JacobianTMul(ctx, x, u) },
			func() (*mat.Dense, error) { return md.SingleKernel().Kernel(ctx, x, nil) },
			func() (*mat.Dense, error) { return md.Kernel(ctx, x, nil) },
			func() (*mat.Dense, error) { return sp.PredictPrepared(ctx, x) },
		} {
			r, err := f()
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, r)
		}
		return out
	}
	whole := results(false)
	if md.cached(xg).lean() {
		t.Fatal("an entry under the budget is lean")
	}
	wholeBytes := md.memo.Bytes()
	singleFirst := results(true)
	budget := nn.MemoBudget
	nn.MemoBudget = 8 * 80 * 20 // below leanShare times the float64 signals' bytes
	lean := results(false)
	if e := md.cached(xg); !e.lean() || e.deltas != nil {
		t.Fatalf("the entry is not lean with a budget of %d bytes", nn.MemoBudget)
	}
	if b := md.memo.Bytes(); b >= wholeBytes {
		t.Errorf("lean entry %d bytes, the whole one %d", b, wholeBytes)
	}
	nn.MemoBudget = budget
	for i := range whole {
		if !mat.Equal(whole[i], lean[i]) {
			t.Errorf("call %d: the lean entry's numbers differ", i)
		}
		if !mat.Equal(whole[i], singleFirst[i]) {
			t.Errorf("call %d: the numbers differ where a single-precision call made the entry", i)
		}
	}
	checkLeanBounds(t, md, xg, v, u, lean, whole)
}

// checkLeanBounds: TestLeanEntries' single-precision results (Phi v,
// Phi^T u, the kernel and the predictions: calls 1, 2, 5 and 7 of single)
// are within boundPass's bounds of their float64 ones (calls 3, 4, 6 and
// 0 of double).
func checkLeanBounds(t *testing.T, md *Model, xg blas64.General, v, u *mat.Dense, single, double []*mat.Dense) {
	t.Helper()
	n := xg.Rows
	pb := boundPass(md, xg)
	pb.requireMasks(t)
	var bv, bu, bk mat.Dense
	bv.Mul(pb.absJ, absOf(v))
	bu.Mul(pb.absJ.T(), absOf(u))
	bk.Mul(pb.absJ, pb.absJ.T())
	in, out := 0, 0
	for _, ly := range md.layers {
		in, out = max(in, ly.in), max(out, ly.out)
	}
	bv.Scale(gamma(in+5+pb.cJ, u32), &bv)
	bu.Scale(gamma(n+6+pb.cJ, u32), &bu)
	bk.Scale(gamma(in+out+6+2*pb.cJ+2*len(md.layers)+2, u32), &bk)
	// The predictions: the head's slope (sd) times the raw output's bound,
	// one more rounding for the link in float64.
	slopes := make([]float64, n)
	md.head.Link(make([]float64, n), slopes)
	bp := mat.NewDense(n, 1, nil)
	for i := range slopes {
		bp.Set(i, 0, gamma(pb.cOut+1, u32)*math.Abs(slopes[i])*pb.out[i])
	}
	for _, c := range []struct {
		single, double int
		bound          *mat.Dense
	}{{1, 3, &bv}, {2, 4, &bu}, {5, 6, &bk}, {7, 0, bp}} {
		checkBound(t, fmt.Sprintf("call %d", c.single), single[c.single], double[c.double], c.bound)
	}
}

// TestSingleTMulZeroRows checks the single-precision Phi^T u where u has
// zero rows, which the product skips (one run of zeros, as the lazy
// estimator's folds give; zeros at the start; zeros too scattered to
// split on; all zeros), against the double product within
// TestSinglePrecisionProducts' bound, and all zeros to exactly 0.
func TestSingleTMulZeroRows(t *testing.T) {
	for _, task := range tasks {
		t.Run(task.String(), func(t *testing.T) {
			md, x := smallProblem(t, task, "6,5,3", 120)
			s := md.SinglePrecision()
			j, err := md.Jacobian(ctx, x)
			if err != nil {
				t.Fatal(err)
			}
			rows, _ := j.Dims()
			rng := rand.New(rand.NewPCG(5, 11))
			u := mat.NewDense(rows, 4, nil)
			for i := 0; i < rows; i++ {
				for c, zero := range []bool{i >= 40 && i < 80, i < 30, i%3 == 0, true} {
					if !zero {
						u.Set(i, c, rng.NormFloat64())
					}
				}
			}
			got, err := s.JacobianTMul(ctx, x, u)
			if err != nil {
				t.Fatal(err)
			}
			want, err := md.JacobianTMul(ctx, x, u)
			if err != nil {
				t.Fatal(err)
			}
			m, _ := want.Dims()
			for i := 0; i < m; i++ {
				if v := got.At(i, 3); v != 0 {
					t.Fatalf("Phi^T 0 has %v at %d", v, i)
				}
			}
			pb := boundPass(md, x.RawMatrix())
			pb.requireMasks(t)
			var bound mat.Dense
			bound.Mul(pb.absJ.T(), absOf(u))
			bound.Scale(gamma(rows+6+pb.cJ, u32), &bound)
			checkBound(t, "JacobianTMul", got.Slice(0, m, 0, 3).(*mat.Dense), want.Slice(0, m, 0, 3).(*mat.Dense), bound.Slice(0, m, 0, 3).(*mat.Dense))
		})
	}
}
