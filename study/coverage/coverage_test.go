package coverage

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/inference"
)

// TestSemiSyntheticDraw: a draw keeps the base features, adds a permuted
// copy of the first feature and z, shifts the response by b z with b^2 =
// signal Var(y), gives the truth (unknown, 0, b^2) per feature, and
// depends on the seed only.
func TestSemiSyntheticDraw(t *testing.T) {
	// Response in the middle: the columns around it are the features.
	x := mat.NewDense(6, 3, []float64{
		1, 10, 2,
		2, 20, 3,
		3, 15, 5,
		4, 40, 7,
		5, 25, 11,
		6, 30, 13,
	})
	d := &dataio.Dataset{Source: "t.csv", Names: []string{"a", "y", "c"}, X: x}
	s, err := newSemiSynthetic(d, "y", 0.2, 0)
	if err != nil {
		t.Fatal(err)
	}
	y := mat.Col(nil, 1, x)
	if want := math.Sqrt(0.2 * stat.Variance(y, nil)); math.Abs(s.b-want) > 1e-12 {
		t.Fatalf("b = %v, want %v", s.b, want)
	}
	got, truth := s.draw(5)
	if want := []string{"a", "c", "perm_a", "z", "y"}; !slices.Equal(got.Names, want) {
		t.Fatalf("names %v, want %v", got.Names, want)
	}
	if !math.IsNaN(truth[0]) || !math.IsNaN(truth[1]) || truth[2] != 0 || math.Abs(truth[3]-s.b*s.b) > 1e-12 || len(truth) != 4 {
		t.Errorf("truth %v, want NaN NaN 0 %v", truth, s.b*s.b)
	}
	perm := mat.Col(nil, 2, got.X)
	orig := mat.Col(nil, 0, x)
	slices.Sort(perm)
	if !slices.Equal(perm, orig) {
		t.Errorf("perm_a %v is not a permutation of a %v", perm, orig)
	}
	for i := 0; i < 6; i++ {
		if got.X.At(i, 0) != x.At(i, 0) || got.X.At(i, 1) != x.At(i, 2) {
			t.Errorf("row %d: base features changed", i)
		}
		if want := y[i] + s.b*got.X.At(i, 3); math.Abs(got.X.At(i, 4)-want) > 1e-12 {
			t.Errorf("row %d: y' = %v, want y + b z = %v", i, got.X.At(i, 4), want)
		}
	}
	again, _ := s.draw(5)
	other, _ := s.draw(6)
	if !mat.Equal(again.X, got.X) || mat.Equal(other.X, got.X) {
		t.Error("want the same draw for the same seed and another for another seed")
	}
	if _, err := newSemiSynthetic(d, "y", 0, 0); err == nil {
		t.Error("signal 0: want an error")
	}
	if _, err := newSemiSynthetic(&dataio.Dataset{Source: "z.csv", Names: []string{"z", "y"}, X: mat.NewDense(2, 2, []float64{1, 2, 3, 4})}, "", 0.1, 0); err == nil || !strings.Contains(err.Error(), "z.csv") {
		t.Errorf("a column named z: want an error naming the file, got %v", err)
	}
	for _, bad := range []float64{-0.1, 1, math.NaN()} {
		if _, err := newSemiSynthetic(d, "y", 0.2, bad); err == nil {
			t.Errorf("copy %v: want an error", bad)
		}
	}
}

// The noisy copy: of the feature most correlated with the response (c:
// 0.97, a: 0.73), after z, its correlation with it as asked for (within
// the sampling error of 4000 rows: sd about (1 - r^2)/sqrt(n) = 0.003),
// and the other columns the same as without it.
func TestSemiSyntheticCopy(t *testing.T) {
	n := 4000
	x := mat.NewDense(n, 3, nil)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range n {
		a, c := rng.NormFloat64(), rng.NormFloat64()
		x.SetRow(i, []float64{a, 0.5*a + 2*c + 0.3*rng.NormFloat64(), c})
	}
	d := &dataio.Dataset{Source: "t.csv", Names: []string{"a", "y", "c"}, X: x}
	plain, err := newSemiSynthetic(d, "y", 0.2, 0)
	if err != nil {
		t.Fatal(err)
	}
	s, err := newSemiSynthetic(d, "y", 0.2, 0.9)
	if err != nil {
		t.Fatal(err)
	}
	got, truth := s.draw(7)
	without, _ := plain.draw(7)
	if want := []string{"a", "c", "perm_a", "z", "copy_c", "y"}; !slices.Equal(got.Names, want) {
		t.Fatalf("names %v, want %v", got.Names, want)
	}
	if len(truth) != 5 || truth[4] != 0 || truth[2] != 0 {
		t.Errorf("truth %v, want the copy's 0 after perm_a's 0 and z's", truth)
	}
	if r := stat.Correlation(mat.Col(nil, 4, got.X), mat.Col(nil, 2, x), nil); math.Abs(r-0.9) > 4*0.003 {
		t.Errorf("Corr(copy_c, c) = %.4f, want 0.9", r)
	}
	for _, c := range [][2]int{{0, 0}, {1, 1}, {2, 2}, {3, 3}, {5, 4}} {
		if !slices.Equal(mat.Col(nil, c[0], got.X), mat.Col(nil, c[1], without.X)) {
			t.Errorf("column %s differs from the draw without the copy", got.Names[c[0]])
		}
	}
}

// TestCoherent: a result is coherent when its interval holds its estimate
// and lies above 0 exactly when p < (1 - level)/2.
func TestCoherent(t *testing.T) {
	for _, c := range []struct {
		r    inference.Result
		want bool
	}{
		{inference.Result{VI: 1, CILow: 0.5, CIHigh: 1.5, PValue: 0.001}, true},
		{inference.Result{VI: 1, CILow: -0.5, CIHigh: 2.5, PValue: 0.1}, true},
		{inference.Result{VI: 1, CILow: -0.5, CIHigh: 2.5, PValue: 0.001}, false}, // the previous default's split interval, paired p
		{inference.Result{VI: 3, CILow: -0.5, CIHigh: 2.5, PValue: 0.3}, false},   // vi outside its interval
		{inference.Result{VI: 1, CILow: 0.1, CIHigh: 1.9, PValue: 0.03}, false},
	} {
		if got := Coherent(c.r, 0.95); got != c.want {
			t.Errorf("%+v: coherent %v, want %v", c.r, got, c.want)
		}
	}
}

// The copy through newDraw: the report carries it (the JSON and the
// header: the run can be told from one without the copy), and the draw
// has a copy_ column of truth 0 before the response.
func TestDrawCopy(t *testing.T) {
	n := 120
	x := mat.NewDense(n, 3, nil)
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range n {
		a, c := rng.NormFloat64(), rng.NormFloat64()
		x.SetRow(i, []float64{a, c, a + c + rng.NormFloat64()})
	}
	data := &dataio.Dataset{Source: "lin.csv", Names: []string{"x1", "x2", "y"}, X: x}
	draw, rep, err := newDraw(Config{Setting: "semi", Data: data, Signal: 0.05, Copy: 0.9})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Copy != 0.9 || rep.N != n {
		t.Errorf("report copy %v, n %d; want 0.9 and %d", rep.Copy, rep.N, n)
	}
	d, truth, _, err := draw(1)
	if err != nil {
		t.Fatal(err)
	}
	if name := d.Names[len(d.Names)-2]; !strings.HasPrefix(name, semiCopyPrefix) || truth[len(truth)-1] != 0 {
		t.Errorf("names %v, truth %v: want a copy_ column of truth 0 before the response", d.Names, truth)
	}
	if _, _, err := newDraw(Config{Setting: "bogus"}); err == nil {
		t.Error("setting bogus: want a usage error")
	}
}
