package simulate

import (
	"context"
	"math"
	"testing"
	"time"
)

// reluMean is E[max(c + d Z, 0)]: against a Monte Carlo average of 10^6
// draws, within 5 of its standard errors.
func TestReluMean(t *testing.T) {
	rng := newRand(3)
	for _, cd := range [][2]float64{{0.3, 1.2}, {-1, 0.5}, {2, 0.1}} {
		c, d := cd[0], cd[1]
		const n = 1000000
		var s, s2 float64
		for range n {
			r := math.Max(c+d*rng.NormFloat64(), 0)
			s += r
			s2 += r * r
		}
		mc := s / n
		se := math.Sqrt((s2/n - mc*mc) / n)
		if got := reluMean(c, d); math.Abs(got-mc) > 5*se {
			t.Errorf("reluMean(%g, %g) = %.5f, Monte Carlo %.5f (se %.5f)", c, d, got, mc, se)
		}
	}
}

// The truth's own Monte Carlo error is small beside the estimators'
// errors: two seeds' estimates at a fifth of HighDimTruth's rows agree
// within 5 of their joint standard errors, which are at most 2% of an
// important feature's VI (1% at the full rows) and 0.01 for the others;
// the important features dominate the nulls.
func TestHighDimTruth(t *testing.T) {
	if testing.Short() {
		t.Skip("Monte Carlo over 4 x 10^4 rows")
	}
	a, sa, _ := highDimTruthMC(context.Background(), 0.5, highDimTruthRows/5, 0x5eed)
	b, sb, _ := highDimTruthMC(context.Background(), 0.5, highDimTruthRows/5, 7)
	for j := range a {
		if math.Abs(a[j]-b[j]) > 5*math.Hypot(sa[j], sb[j]) {
			t.Errorf("x%d: %.4f and %.4f from two seeds (se %.4f, %.4f)", j+1, a[j], b[j], sa[j], sb[j])
		}
		if j < 5 && sa[j] > 0.02*a[j] || j >= 5 && sa[j] > 0.01 {
			t.Errorf("x%d: Monte Carlo se %.4f of %.4f", j+1, sa[j], a[j])
		}
		if j >= 5 && a[j] > a[4]/2 {
			t.Errorf("x%d: %.4f, not small beside x5's %.4f", j+1, a[j], a[4])
		}
	}
	t.Logf("x1..x6: %.4f (se %.4f)", a[:6], sa[:6])
	null := 0.0
	for _, v := range a[5:] {
		null += v / 95
	}
	t.Logf("mean of x6..x100: %.4f", null)
}

// TestHighDimTruthCancelled: a cancelled context ends the Monte Carlo at
// its next look (within truthCheckRows draws), with the context's error and
// nothing cached.
func TestHighDimTruthCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	vi, err := HighDimTruth(ctx, 0.25)
	if err != context.Canceled || vi != nil {
		t.Fatalf("HighDimTruth on a cancelled context: %v, %v", vi, err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("returned after %v", d)
	}
	if _, ok := highDimTruths.Load(0.25); ok {
		t.Error("an interrupted truth was cached")
	}
}
