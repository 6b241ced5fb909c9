package cnn

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/backends/internal/nn"
	"github.com/lazyvi/lazyvi/framework"
)

// productModel fits a small network on the 5x4 images of gradData (n rows,
// more than productBlock so the products run over two blocks).
func productModel(t *testing.T, task framework.Task, pool, hidden string, n int) (*Model, *mat.Dense) {
	t.Helper()
	spec := framework.ModelSpec{Task: task, Inputs: 20, Seed: 11, Options: map[string]string{
		"image": "5x4", "filters": "3", "hidden": hidden, "pool_kind": pool, "epochs": "3"}}
	if task == framework.Multiclass {
		spec.Classes = 3
	}
	md, err := NewModel(spec)
	if err != nil {
		t.Fatal(err)
	}
	x, y := gradData(n, task, 4)
	if err := md.Fit(context.Background(), x, y); err != nil {
		t.Fatal(err)
	}
	return md, x
}

func randomDense(rng *rand.Rand, r, c int) *mat.Dense {
	d := mat.NewDense(r, c, nil)
	raw := d.RawMatrix().Data
	for i := range raw {
		raw[i] = rng.NormFloat64()
	}
	return d
}

func absDense(a mat.Matrix) *mat.Dense {
	var d mat.Dense
	d.Apply(func(_, _ int, v float64) float64 { return math.Abs(v) }, a)
	return &d
}

// gamma is Higham's gamma_k = k u / (1 - k u), the relative bound of a
// sum of k products in floating point.
func gamma(k int) float64 {
	u := 0x1p-53 * float64(k)
	return u / (1 - u)
}

// checkProduct compares got with want = a b column by column: both are
// sums of the same terms, in another order and with other roundings on
// the way, so each differs from the exact product by at most gamma_k times
// the sum of the terms' absolute values (|a| |b|, k the length of the
// longest chain of sums, bounded by the inner dimension plus the depth);
// twice that bounds their difference. The scale is the column's largest
// such sum (the normwise bound: the matrix-free sums group the terms
// differently, so an entry's own sum need not bound its rounding).
func checkProduct(t *testing.T, what string, got *mat.Dense, a, b mat.Matrix, depth int) {
	t.Helper()
	var want, scale mat.Dense
	want.Mul(a, b)
	scale.Mul(absDense(a), absDense(b))
	r, c := want.Dims()
	if gr, gc := got.Dims(); gr != r || gc != c {
		t.Fatalf("%s: want %d x %d, got %d x %d", what, r, c, gr, gc)
	}
	_, k := a.Dims()
	for j := 0; j < c; j++ {
		s, d := 0.0, 0.0
		for i := 0; i < r; i++ {
			s = math.Max(s, scale.At(i, j))
			d = math.Max(d, math.Abs(got.At(i, j)-want.At(i, j)))
		}
		if tol := 2 * gamma(k+depth) * s; !(d <= tol) || s == 0 {
			t.Errorf("%s, column %d: largest difference %.3g, bound %.3g", what, j, d, tol)
		}
	}
}

// TestJacobianProducts compares the matrix-free products with the formed
// Jacobian's, for every task (multiclass: K rows per sample), both
// poolings and two depths, with several vectors at a time, and checks the
// adjoint identity u^T (J v) = (J^T u)^T v.
func TestJacobianProducts(t *testing.T) {
	ctx := context.Background()
	for _, task := range []framework.Task{framework.Regression, framework.Binary, framework.Multiclass} {
		for _, pool := range []string{"max", "avg"} {
			for _, hidden := range []string{"", "5,4"} {
				t.Run(fmt.Sprintf("%v/%s/%q", task, pool, hidden), func(t *testing.T) {
					md, x := productModel(t, task, pool, hidden, productBlock+44)
					j, err := md.Jacobian(ctx, x)
					if err != nil {
						t.Fatal(err)
					}
					rows, m := j.Dims()
					depth := 3 + len(md.layers)
					rng := rand.New(rand.NewPCG(5, 7))
					v, u := randomDense(rng, m, 3), randomDense(rng, rows, 3)
					xBefore := mat.DenseCopyOf(x)
					jv, err := md.JacobianMul(ctx, x, v)
					if err != nil {
						t.Fatal(err)
					}
					checkProduct(t, "JacobianMul", jv, j, v, depth)
					jtu, err := md.JacobianTMul(ctx, x, u)
					if err != nil {
						t.Fatal(err)
					}
					checkProduct(t, "JacobianTMul", jtu, j.T(), u, depth)
					if !mat.Equal(x, xBefore) {
						t.Errorf("a product modified its input")
					}
					// One vector gives the same column as three.
					one, err := md.JacobianMul(ctx, x, mat.DenseCopyOf(v.Slice(0, m, 1, 2)))
					if err != nil {
						t.Fatal(err)
					}
					if !mat.Equal(one, jv.Slice(0, rows, 1, 2)) {
						t.Errorf("JacobianMul of column 1 alone differs from its column in a batch")
					}
					// u^T (J v) against (J^T u)^T v, each bounded by
					// |u|^T |J| |v| with sums of rows + m terms.
					var lhs, rhs, bound, t1 mat.Dense
					lhs.Mul(u.T(), jv)
					rhs.Mul(jtu.T(), v)
					t1.Mul(absDense(j), absDense(v))
					bound.Mul(absDense(u).T(), &t1)
					for c := 0; c < 3; c++ {
						d, s := math.Abs(lhs.At(c, c)-rhs.At(c, c)), bound.At(c, c)
						if tol := 2 * gamma(rows+m+depth) * s; !(d <= tol) {
							t.Errorf("adjoint identity, column %d: u^T(Jv) %.17g, (J^T u)^T v %.17g, bound %.3g", c, lhs.At(c, c), rhs.At(c, c), tol)
						}
					}
				})
			}
		}
	}
}

// TestJacobianProductErrors: an unfitted model, vectors of the wrong
// length and inputs of the wrong width are errors, not panics.
func TestJacobianProductErrors(t *testing.T) {
	ctx := context.Background()
	unfit, err := NewModel(framework.ModelSpec{Inputs: 20, Options: map[string]string{"image": "5x4", "filters": "2", "hidden": "3"}})
	if err != nil {
		t.Fatal(err)
	}
	x, _ := gradData(10, framework.Regression, 1)
	m := unfit.NumParams()
	if _, err := unfit.JacobianMul(ctx, x, mat.NewDense(m, 1, nil)); err == nil || !strings.Contains(err.Error(), "not fitted") {
		t.Errorf("JacobianMul on an unfitted model: want a not-fitted error, got %v", err)
	}
	if _, err := unfit.JacobianTMul(ctx, x, mat.NewDense(10, 1, nil)); err == nil || !strings.Contains(err.Error(), "not fitted") {
		t.Errorf("JacobianTMul on an unfitted model: want a not-fitted error, got %v", err)
	}
	md, x := productModel(t, framework.Multiclass, "max", "4", 30)
	m = md.NumParams()
	for _, r := range []int{m - 1, m + 1} {
		if _, err := md.JacobianMul(ctx, x, mat.NewDense(r, 2, nil)); err == nil {
			t.Errorf("JacobianMul accepted %d rows for %d parameters", r, m)
		}
	}
	// Multiclass: K = 3 rows per sample.
	for _, r := range []int{30, 3*30 + 1} {
		if _, err := md.JacobianTMul(ctx, x, mat.NewDense(r, 2, nil)); err == nil {
			t.Errorf("JacobianTMul accepted %d rows for 30 samples of 3 classes", r)
		}
	}
	if _, err := md.JacobianMul(ctx, mat.NewDense(4, 19, nil), mat.NewDense(m, 1, nil)); err == nil {
		t.Errorf("JacobianMul accepted inputs of 19 columns for 20")
	}
	if _, err := md.JacobianTMul(ctx, mat.NewDense(4, 19, nil), mat.NewDense(12, 1, nil)); err == nil {
		t.Errorf("JacobianTMul accepted inputs of 19 columns for 20")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := md.JacobianMul(cancelled, x, mat.NewDense(m, 1, nil)); err == nil {
		t.Errorf("JacobianMul ignored a cancelled context")
	}
}

// TestJacobianProductsMemo: the products are the same, bit for bit, from
// the memo's passes (a hit, too) and computed block by block when the
// passes exceed its budget; a warm-started model has its own memo (its
// products follow its own parameters, not the memoised passes of the
// model it started from).
func TestJacobianProductsMemo(t *testing.T) {
	ctx := context.Background()
	md, x := productModel(t, framework.Multiclass, "max", "5", productBlock+10)
	rows, m := x.RawMatrix().Rows*3, md.NumParams()
	rng := rand.New(rand.NewPCG(9, 9))
	v, u := randomDense(rng, m, 2), randomDense(rng, rows, 2)
	products := func(md *Model) [2]*mat.Dense {
		t.Helper()
		jv, err := md.JacobianMul(ctx, x, v)
		if err != nil {
			t.Fatal(err)
		}
		jtu, err := md.JacobianTMul(ctx, x, u)
		if err != nil {
			t.Fatal(err)
		}
		return [2]*mat.Dense{jv, jtu}
	}
	first := products(md)
	if md.memo.Len() != 1 {
		t.Fatalf("memo holds %d entries after products on one input, want 1", md.memo.Len())
	}
	hit := products(md)
	defer func(b int) { nn.MemoBudget = b }(nn.MemoBudget)
	nn.MemoBudget = md.passBytes(x.RawMatrix()) - 1
	md.memo.Clear()
	streamed := products(md)
	if md.memo.Len() != 0 {
		t.Errorf("passes over the budget were kept")
	}
	for k := range first {
		if !mat.Equal(hit[k], first[k]) || !mat.Equal(streamed[k], first[k]) {
			t.Errorf("product %d: a memo hit or the block-by-block path differs from the first call", k)
		}
	}
	nn.MemoBudget = 64 << 20
	products(md) // fills the memo at md's parameters
	xs, ys := gradData(productBlock+10, framework.Multiclass, 4)
	w, err := md.WarmStart(ctx, xs, ys, 20, 3)
	if err != nil {
		t.Fatal(err)
	}
	wm := w.(*Model)
	j, err := wm.Jacobian(ctx, x)
	if err != nil {
		t.Fatal(err)
	}
	got := products(wm)
	checkProduct(t, "warm-started JacobianMul", got[0], j, v, 3+len(wm.layers))
	checkProduct(t, "warm-started JacobianTMul", got[1], j.T(), u, 3+len(wm.layers))
}
