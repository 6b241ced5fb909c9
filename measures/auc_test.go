package measures

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
)

// TestAUCHandComputed: y = (1,1,0,0,1,0), p = (.9,.4,.4,.2,.7,.8). Of the 9
// (positive, negative) pairs, .9 beats all 3 negatives, .4 ties one and beats
// one (1.5), .7 beats two: AUC = 6.5/9 = 13/18. Placement values V10 =
// (1, 1/2, 2/3) for the positives, V01 = (5/6, 1, 1/3) for the negatives;
// with pi1 = pi0 = 1/2, IF = 2 (V - 13/18).
func TestAUCHandComputed(t *testing.T) {
	y := []float64{1, 1, 0, 0, 1, 0}
	s, err := AUC().Evaluate(y, col(.9, .4, .4, .2, .7, .8))
	if err != nil {
		t.Fatal(err)
	}
	if !scalar.EqualWithinAbs(s.Value, 13.0/18, 1e-12) {
		t.Errorf("AUC: want %v, got %v", 13.0/18, s.Value)
	}
	want := []float64{5.0 / 9, -4.0 / 9, 2.0 / 9, 5.0 / 9, -1.0 / 9, -7.0 / 9}
	for i := range want {
		if !scalar.EqualWithinAbs(s.Influence[i], want[i], 1e-12) {
			t.Errorf("IF[%d]: want %v, got %v", i, want[i], s.Influence[i])
		}
	}
	// DeLong's variance: var(V10)/n1 + var(V01)/n0 with the divisor-n
	// variances equals mean(IF^2)/n.
	v10 := []float64{1, 0.5, 2.0 / 3}
	v01 := []float64{5.0 / 6, 1, 1.0 / 3}
	popVar := func(x []float64) float64 {
		m := stat.Mean(x, nil)
		return stat.Variance(x, nil)*float64(len(x)-1)/float64(len(x)) + 0*m
	}
	delong := popVar(v10)/3 + popVar(v01)/3
	var ms float64
	for _, v := range s.Influence {
		ms += v * v
	}
	ms /= 6
	if !scalar.EqualWithinAbs(ms/6, delong, 1e-12) {
		t.Errorf("mean(IF^2)/n = %v, DeLong %v", ms/6, delong)
	}
}

// aucBrute is the Mann-Whitney statistic of the weighted sample.
func aucBrute(y, p, w []float64) float64 {
	var num, w1, w0 float64
	for i := range y {
		if y[i] == 1 {
			w1 += w[i]
		} else {
			w0 += w[i]
		}
		for j := range y {
			if y[i] == 1 && y[j] == 0 {
				switch {
				case p[i] > p[j]:
					num += w[i] * w[j]
				case p[i] == p[j]:
					num += 0.5 * w[i] * w[j]
				}
			}
		}
	}
	return num / (w1 * w0)
}

// TestAUCAgainstBruteForce, with ties, and the influence values against
// their definition d/de AUC((1-e) P_n + e delta_i).
func TestAUCAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	n := 40
	y := make([]float64, n)
	p := make([]float64, n)
	w := make([]float64, n)
	for i := range y {
		if rng.Float64() < 0.4 {
			y[i] = 1
		}
		p[i] = math.Round(10*min(1, max(0, 0.5+0.3*(y[i]-0.5)+0.25*rng.NormFloat64()))) / 10 // ties
		w[i] = 1.0 / float64(n)
	}
	s, err := AUC().Evaluate(y, col(p...))
	if err != nil {
		t.Fatal(err)
	}
	if b := aucBrute(y, p, w); !scalar.EqualWithinAbs(s.Value, b, 1e-12) {
		t.Errorf("AUC: brute force %v, got %v", b, s.Value)
	}
	const h = 1e-6
	for i := range n {
		at := func(e float64) float64 {
			for k := range w {
				w[k] = (1 - e) / float64(n)
			}
			w[i] += e
			return aucBrute(y, p, w)
		}
		num := (at(h) - at(-h)) / (2 * h)
		if !scalar.EqualWithinAbsOrRel(num, s.Influence[i], 1e-6, 1e-6) {
			t.Errorf("sample %d: want IF %v (numerical), got %v", i, num, s.Influence[i])
		}
	}
	if _, err := AUC().Evaluate([]float64{1, 1}, col(.2, .3)); err == nil {
		t.Error("one class: want an error")
	}
	if m, err := framework.LookupMeasure("auc"); err != nil || !m.Supports(framework.Binary) || m.Supports(framework.Regression) {
		t.Errorf("auc: registered %v, err %v", m, err)
	}
}

// TestAUCStandardErrorBootstrap compares the DeLong standard error
// sd(IF)/sqrt(n) with a nonparametric bootstrap's on the breast cancer data
// (569 rows), for two scores: one feature's logistic transform (AUC about
// 0.78) and a two-feature score (about 0.97). The bootstrap's own relative
// error with B = 2000 is about 1/sqrt(2B) = 1.6%; the tolerance is 10%.
func TestAUCStandardErrorBootstrap(t *testing.T) {
	const path = "testdata/breast_cancer.csv" // a copy of scikit-learn's
	d, err := dataio.LoadCSV(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	n, cols := d.X.Dims()
	y := mat.Col(nil, cols-1, d.X)
	z := func(name string) []float64 {
		j, err := d.Column(name)
		if err != nil {
			t.Fatal(err)
		}
		c := mat.Col(nil, j, d.X)
		m, sd := stat.MeanStdDev(c, nil)
		for i := range c {
			c[i] = (c[i] - m) / sd
		}
		return c
	}
	texture, smooth, area := z("mean_texture"), z("mean_smoothness"), z("worst_area")
	scores := map[string][]float64{"mean_texture": make([]float64, n), "texture+smoothness+area": make([]float64, n)}
	for i := range n {
		scores["mean_texture"][i] = 1 / (1 + math.Exp(-texture[i]))
		scores["texture+smoothness+area"][i] = 1 / (1 + math.Exp(-(0.5*texture[i] + 0.5*smooth[i] + area[i])))
	}
	for name, p := range scores {
		s, err := AUC().Evaluate(y, col(p...))
		if err != nil {
			t.Fatal(err)
		}
		se := stat.StdDev(s.Influence, nil) / math.Sqrt(float64(n))
		rng := rand.New(rand.NewPCG(5, 6))
		const B = 2000
		boot := make([]float64, 0, B)
		yb, pb := make([]float64, n), make([]float64, n)
		for range B {
			for i := range n {
				k := rng.IntN(n)
				yb[i], pb[i] = y[k], p[k]
			}
			sb, err := AUC().Evaluate(yb, col(pb...))
			if err != nil {
				continue
			}
			boot = append(boot, sb.Value)
		}
		bse := stat.StdDev(boot, nil)
		t.Logf("%s: AUC %.4f, DeLong se %.5f, bootstrap se %.5f (ratio %.3f)", name, s.Value, se, bse, se/bse)
		if math.Abs(se/bse-1) > 0.10 {
			t.Errorf("%s: DeLong se %.5f vs bootstrap %.5f: off by more than 10%%", name, se, bse)
		}
	}
}
