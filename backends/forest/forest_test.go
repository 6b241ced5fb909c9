package forest

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
)

// friedman1 draws Friedman's (1991) first benchmark: x ~ U(0,1)^p,
// y = 10 sin(pi x1 x2) + 20 (x3 - 0.5)^2 + 10 x4 + 5 x5 + N(0, 1).
func friedman1(n, p int, seed uint64) (*mat.Dense, []float64) {
	rng := rand.New(rand.NewPCG(seed, 1991))
	x := mat.NewDense(n, p, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		r := x.RawRowView(i)
		for k := range r {
			r[k] = rng.Float64()
		}
		y[i] = 10*math.Sin(math.Pi*r[0]*r[1]) + 20*(r[2]-0.5)*(r[2]-0.5) + 10*r[3] + 5*r[4] + rng.NormFloat64()
	}
	return x, y
}

func r2(y []float64, pred *mat.Dense) float64 {
	var mean, sse, sst float64
	for _, v := range y {
		mean += v
	}
	mean /= float64(len(y))
	for i, v := range y {
		sse += (v - pred.At(i, 0)) * (v - pred.At(i, 0))
		sst += (v - mean) * (v - mean)
	}
	return 1 - sse/sst
}

// TestFriedman1: test R^2 >= 0.85 at n = 2000, p = 10 with the defaults,
// and the out-of-bag R^2 close to it.
func TestFriedman1(t *testing.T) {
	x, y := friedman1(2000, 10, 1)
	xt, yt := friedman1(2000, 10, 2)
	f, err := Fit(context.Background(), x, y, Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	pred, err := f.Predict(xt)
	if err != nil {
		t.Fatal(err)
	}
	got := r2(yt, pred)
	oob, ok := f.OOB()
	t.Logf("Friedman-1 n=2000 p=10: test R^2 %.4f, OOB R^2 %.4f (OOB MSE %.3f on %d rows)", got, oob.R2, oob.MSE, oob.N)
	if got < 0.85 {
		t.Errorf("test R^2 %.4f, want >= 0.85", got)
	}
	if !ok || oob.N < 1990 || math.Abs(oob.R2-got) > 0.03 {
		t.Errorf("OOB R^2 %.4f on %d rows, want within 0.03 of the test R^2 %.4f", oob.R2, oob.N, got)
	}
}

// TestDeterministic: the same seed gives bit-identical predictions for any
// number of workers; another seed gives another forest.
func TestDeterministic(t *testing.T) {
	x, y := friedman1(300, 5, 3)
	var ref *mat.Dense
	var refOOB OOB
	for _, w := range []int{1, 2, 7} {
		f, err := Fit(context.Background(), x, y, Config{Trees: 20, Seed: 42, Workers: w})
		if err != nil {
			t.Fatal(err)
		}
		p, _ := f.Predict(x)
		o, _ := f.OOB()
		if ref == nil {
			ref, refOOB = p, o
			continue
		}
		if !mat.Equal(p, ref) || !sameOOB(o, refOOB) {
			t.Fatalf("workers %d: predictions or OOB differ from workers 1", w)
		}
	}
	f, _ := Fit(context.Background(), x, y, Config{Trees: 20, Seed: 43})
	p, _ := f.Predict(x)
	if mat.Equal(p, ref) {
		t.Fatal("seed 43 gave the same forest as seed 42")
	}
}

// TestClassification: binary and 3-class problems with a clear signal;
// class shares sum to one.
func TestClassification(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	gen := func(n int) (*mat.Dense, []float64) {
		x := mat.NewDense(n, 4, nil)
		y := make([]float64, n)
		for i := 0; i < n; i++ {
			r := x.RawRowView(i)
			for k := range r {
				r[k] = rng.NormFloat64()
			}
			switch {
			case r[0] > 0.5:
				y[i] = 2
			case r[1] > 0:
				y[i] = 1
			}
		}
		return x, y
	}
	x, y := gen(1500)
	xt, yt := gen(1000)
	f, err := Fit(context.Background(), x, y, Config{Classes: 3, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	pr, _ := f.Predict(xt)
	wrong := 0
	for i := range yt {
		row := pr.RawRowView(i)
		if s := row[0] + row[1] + row[2]; math.Abs(s-1) > 1e-12 {
			t.Fatalf("row %d: shares sum to %v", i, s)
		}
		arg := 0
		for c := range row {
			if row[c] > row[arg] {
				arg = c
			}
		}
		if float64(arg) != yt[i] {
			wrong++
		}
	}
	acc := 1 - float64(wrong)/float64(len(yt))
	oob, _ := f.OOB()
	t.Logf("3 classes: test accuracy %.3f, OOB error %.3f, OOB log-loss %.3f", acc, oob.ErrorRate, oob.LogLoss)
	if acc < 0.95 || math.Abs(1-oob.ErrorRate-acc) > 0.03 {
		t.Errorf("accuracy %.3f (OOB error %.3f), want >= 0.95 and OOB within 0.03", acc, oob.ErrorRate)
	}

	// Binary through the framework: P(Y = 1) in [0, 1].
	yb := make([]float64, len(y))
	for i, v := range y {
		if v == 1 {
			yb[i] = 1
		}
	}
	md, err := NewModel(framework.ModelSpec{Task: framework.Binary, Inputs: 4, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := md.Fit(context.Background(), x, yb); err != nil {
		t.Fatal(err)
	}
	p1, err := md.Predict(context.Background(), xt)
	if err != nil {
		t.Fatal(err)
	}
	if r, c := p1.Dims(); r != 1000 || c != 1 {
		t.Fatalf("binary predictions %dx%d, want 1000x1", r, c)
	}
	if o, ok := md.OOB(); !ok || o.ErrorRate > 0.1 {
		t.Errorf("binary OOB error %.3f, want <= 0.1", o.ErrorRate)
	}
}

// TestOptions: every option reaches the forest, bad ones are usage errors.
func TestOptions(t *testing.T) {
	x, y := friedman1(200, 6, 7)
	md, err := NewModel(framework.ModelSpec{Inputs: 6, Seed: 3, Options: map[string]string{
		"trees": "7", "max_depth": "2", "min_leaf": "10", "mtry": "6", "bootstrap": "false", "workers": "1"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := md.Fit(context.Background(), x, y); err != nil {
		t.Fatal(err)
	}
	f := md.Forest()
	if f.Trees() != 7 {
		t.Errorf("trees %d, want 7", f.Trees())
	}
	for _, tr := range f.trees {
		if depth(tr, 0) > 2 {
			t.Errorf("tree deeper than max_depth 2")
		}
		for _, nd := range tr.nodes {
			if nd.left < 0 && nd.feature != -1 {
				t.Errorf("bad leaf")
			}
		}
	}
	// Without bootstrap and with mtry = p every tree is the same CART tree.
	a, _ := f.trees[0], 0
	for _, tr := range f.trees[1:] {
		if len(tr.nodes) != len(a.nodes) {
			t.Errorf("bootstrap=false, mtry=p: trees differ")
		}
	}
	if _, ok := md.OOB(); ok {
		t.Error("OOB without bootstrap: want ok false")
	}
	for _, opts := range []map[string]string{
		{"trees": "0"}, {"mtry": "7"}, {"bootstrap": "maybe"}, {"min_leaf": "-1"}, {"depth": "3"},
	} {
		if _, err := (Backend{}).New(context.Background(), framework.ModelSpec{Inputs: 6, Options: opts}); !errors.Is(err, framework.ErrUsage) {
			t.Errorf("options %v: want a usage error, got %v", opts, err)
		}
	}
	bin, _ := NewModel(framework.ModelSpec{Task: framework.Binary, Inputs: 6})
	if err := bin.Fit(context.Background(), x, y); !errors.Is(err, framework.ErrUsage) {
		t.Errorf("binary with a real response: want a usage error, got %v", err)
	}
}

func depth(tr *tree, at int32) int {
	nd := tr.nodes[at]
	if nd.left < 0 {
		return 0
	}
	return 1 + max(depth(tr, nd.left), depth(tr, nd.right))
}

// TestMinLeafAndConstantColumn: leaves hold at least min_leaf rows, and a
// constant column (retrain's dropped feature) is never split on.
func TestMinLeafAndConstantColumn(t *testing.T) {
	x, y := friedman1(500, 5, 9)
	for i := 0; i < 500; i++ {
		x.Set(i, 1, 0)
	}
	f, err := Fit(context.Background(), x, y, Config{Trees: 5, MinLeaf: 7, NoBootstrap: true, MTry: 5, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	counts := map[*node]int{}
	for i := 0; i < 500; i++ {
		counts[f.trees[0].leafOf(x.RawRowView(i))]++
	}
	for _, c := range counts {
		if c < 7 {
			t.Fatalf("a leaf holds %d rows, want >= 7", c)
		}
	}
	for _, tr := range f.trees {
		for _, nd := range tr.nodes {
			if nd.left >= 0 && nd.feature == 1 {
				t.Fatal("split on the constant column")
			}
		}
	}
}

func TestCancel(t *testing.T) {
	x, y := friedman1(500, 5, 1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Fit(ctx, x, y, Config{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
}

func BenchmarkFit(b *testing.B) {
	for _, sz := range []struct {
		name        string
		n, p, trees int
	}{{"n=2000,p=10,trees=100", 2000, 10, 100}, {"n=667,p=100,trees=100", 667, 100, 100}} {
		b.Run(sz.name, func(b *testing.B) {
			x, y := friedman1(sz.n, sz.p, 1)
			b.ResetTimer()
			for range b.N {
				if _, err := Fit(context.Background(), x, y, Config{Trees: sz.trees, Seed: 1}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func sameOOB(a, b OOB) bool {
	eq := func(u, v float64) bool { return u == v || (math.IsNaN(u) && math.IsNaN(v)) }
	return a.N == b.N && eq(a.MSE, b.MSE) && eq(a.R2, b.R2) && eq(a.ErrorRate, b.ErrorRate) && eq(a.LogLoss, b.LogLoss)
}

// TestTooManyTrees: a count of trees whose forest cannot fit in the
// machine's memory is a usage error before any of it is allocated (1e9
// trees on 300 rows crashed out of memory).
func TestTooManyTrees(t *testing.T) {
	x := mat.NewDense(300, 2, nil)
	y := make([]float64, 300)
	for i := range y {
		x.Set(i, 0, float64(i))
		x.Set(i, 1, float64(i%7))
		y[i] = float64(i % 3)
	}
	_, err := Fit(context.Background(), x, y, Config{Trees: 1e9})
	if !errors.Is(err, framework.ErrUsage) || !strings.Contains(err.Error(), "1000000000 trees on 300 rows may need up to") {
		t.Errorf("1e9 trees: %v, want a usage error on the trees' memory", err)
	}
}
