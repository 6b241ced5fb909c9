package shapley

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

func TestKernelWeightIsShapleyKernel(t *testing.T) {
	for p := 2; p <= 12; p++ {
		subs, err := Enumerate(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(subs) != (1<<p)-2 {
			t.Fatalf("p=%d: %d subsets, want %d", p, len(subs), (1<<p)-2)
		}
		total := 0.0
		for _, s := range subs {
			total += KernelWeight(p, len(s))
		}
		if math.Abs(total-1) > 1e-12 {
			t.Errorf("p=%d: kernel weights sum to %v, want 1", p, total)
		}
		// Proportional to (p-1)/(C(p,s) s (p-s)), the Shapley kernel.
		for s := 1; s < p; s++ {
			k := float64(p-1) / (math.Exp(lnChoose(p, s)) * float64(s) * float64(p-s))
			k1 := float64(p-1) / (float64(p) * 1 * float64(p-1))
			if r, want := KernelWeight(p, s)/KernelWeight(p, 1), k/k1; math.Abs(r-want) > 1e-12*want {
				t.Errorf("p=%d s=%d: ratio %v, want %v", p, s, r, want)
			}
		}
		sp := SizeProbs(p)
		for s := 1; s < p; s++ {
			want := math.Exp(lnChoose(p, s)) * KernelWeight(p, s)
			if math.Abs(sp[s]-want) > 1e-12 {
				t.Errorf("p=%d: P(|S|=%d) = %v, want %v", p, s, sp[s], want)
			}
		}
	}
	sp := SizeProbs(4)
	for s, want := range []float64{0, 4.0 / 11, 3.0 / 11, 4.0 / 11, 0} {
		if math.Abs(sp[s]-want) > 1e-15 {
			t.Errorf("p=4: P(|S|=%d) = %v, want %v", s, sp[s], want)
		}
	}
}

// vimpProb is the subset probability of vimp's sample_subsets restricted to
// 0 < |S| < p: size proportional to C(p-2,s-1)^-1, then uniform.
func vimpProb(p, s int) float64 {
	z := 0.0
	for t := 1; t < p; t++ {
		z += math.Exp(-lnChoose(p-2, t-1))
	}
	return math.Exp(-lnChoose(p-2, s-1)) / z / math.Exp(lnChoose(p, s))
}

// TestSampleMatchesEnumeration draws subsets and compares their frequencies
// with the kernel probability of every subset by a chi-square test; vimp's
// distribution must fail the same test for p >= 4.
func TestSampleMatchesEnumeration(t *testing.T) {
	const draws = 200000
	for _, p := range []int{3, 4, 5, 6} {
		rng := rand.New(rand.NewPCG(uint64(p), 7))
		ds, err := Sample(rng, p, draws)
		if err != nil {
			t.Fatal(err)
		}
		count := map[uint32]int{}
		n := 0
		for _, d := range ds {
			if len(d.Subset) == 0 || len(d.Subset) == p {
				t.Fatalf("p=%d: drew %v", p, d.Subset)
			}
			count[d.Subset.Mask()] += d.Count
			n += d.Count
		}
		if n != draws {
			t.Fatalf("p=%d: counts sum to %d, want %d", p, n, draws)
		}
		subs, _ := Enumerate(p)
		var chi, chiVimp float64
		for _, s := range subs {
			o := float64(count[s.Mask()])
			e := draws * KernelWeight(p, len(s))
			chi += (o - e) * (o - e) / e
			ev := draws * vimpProb(p, len(s))
			chiVimp += (o - ev) * (o - ev) / ev
		}
		df := float64(len(subs) - 1)
		crit := distuv.ChiSquared{K: df}.Quantile(0.999)
		if chi > crit {
			t.Errorf("p=%d: chi-square %.1f on %v df exceeds the 0.999 quantile %.1f", p, chi, df, crit)
		}
		if p >= 4 && chiVimp < 10*crit {
			t.Errorf("p=%d: vimp's size-then-uniform distribution fits too well (chi-square %.1f)", p, chiVimp)
		}
		if p == 3 && chiVimp > crit {
			t.Errorf("p=3: vimp's distribution equals the kernel, chi-square %.1f", chiVimp)
		}
		t.Logf("p=%d: chi-square %.1f (kernel), %.0f (vimp's), 0.999 quantile %.1f", p, chi, chiVimp, crit)
	}
}

func TestSampleDeterministic(t *testing.T) {
	a, _ := NewPlan(30, 200, false, 9)
	b, _ := NewPlan(30, 200, false, 9)
	if len(a.Subsets) != len(b.Subsets) {
		t.Fatal("same seed, different plans")
	}
	for k := range a.Subsets {
		if a.Subsets[k].String() != b.Subsets[k].String() || a.Counts[k] != b.Counts[k] {
			t.Fatalf("same seed, subset %d differs", k)
		}
	}
	if a.Draws != 200 {
		t.Errorf("draws %d", a.Draws)
	}
}

func TestPlanExactWhenFewSubsets(t *testing.T) {
	pl, err := NewPlan(6, 0, false, 1) // 62 subsets <= 100 draws
	if err != nil {
		t.Fatal(err)
	}
	if !pl.Exact || len(pl.Subsets) != 62 {
		t.Errorf("p=6 default: exact %v, %d subsets; want exact enumeration of 62", pl.Exact, len(pl.Subsets))
	}
	pl, _ = NewPlan(4, 12, false, 1) // 14 subsets > 12 draws
	if pl.Exact || pl.Draws != 12 {
		t.Errorf("p=4, 12 draws: exact %v, draws %d; want 12 sampled", pl.Exact, pl.Draws)
	}
	pl, _ = NewPlan(100, 0, false, 1)
	if pl.Exact || pl.Draws != 922 {
		t.Errorf("p=100 default: exact %v, draws %d; want ceil(200 ln 100) = 922 sampled", pl.Exact, pl.Draws)
	}
	if _, err := NewPlan(25, 0, true, 1); err == nil {
		t.Error("exact with p=25: no error")
	}
}

func TestEnumerateOrder(t *testing.T) {
	subs, _ := Enumerate(3)
	want := []string{"{0}", "{1}", "{2}", "{0,1}", "{0,2}", "{1,2}"}
	for k, s := range subs {
		if s.String() != want[k] {
			t.Errorf("subset %d = %s, want %s", k, s, want[k])
		}
	}
	if got := (Subset{1, 3}).Complement(5); len(got) != 3 || got[0] != 0 || got[1] != 2 || got[2] != 4 {
		t.Errorf("complement %v", got)
	}
}

func TestPlanNotIdentified(t *testing.T) {
	if _, err := NewPlan(50, 10, false, 1); err == nil || !strings.Contains(err.Error(), "do not identify") {
		t.Errorf("10 draws for 50 features: err = %v", err)
	}
}
