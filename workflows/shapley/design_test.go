package shapley

import (
	"math"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// TestBatchMatchesKernel draws pairs and compares the frequencies of their
// first subsets with the Shapley kernel restricted to the sampled sizes by
// a chi-square test (p = 6, nothing enumerated; p = 11, sizes 1, 2, 3 and
// their complements enumerated).
func TestBatchMatchesKernel(t *testing.T) {
	for _, tc := range []struct{ p, budget int }{{6, 20}, {11, 0}} {
		d, err := NewDesign(tc.p, Stop{Subsets: tc.budget}, false, int64(tc.p))
		if err != nil || d.Exact {
			t.Fatalf("p=%d: design %+v, err %v", tc.p, d, err)
		}
		sampled := map[int]bool{}
		mass := 0.0
		for s := 1; s < tc.p; s++ {
			if !slices.Contains(d.Sizes, s) {
				sampled[s] = true
				mass += SizeProbs(tc.p)[s]
			}
		}
		count := map[string]float64{}
		n := 0
		for b := range 3000 {
			for _, pr := range d.Batch(b, BatchPairs) {
				if !sampled[len(pr[0])] || len(pr[0])+len(pr[1]) != tc.p || !slices.Equal(pr[1], pr[0].Complement(tc.p)) {
					t.Fatalf("p=%d: drew %v, %v", tc.p, pr[0], pr[1])
				}
				count[pr[0].String()]++
				n++
			}
		}
		var chi float64
		cells := 0
		for s := range sampled {
			for _, sub := range ofSize(tc.p, s) {
				e := float64(n) * KernelWeight(tc.p, s) / mass
				o := count[sub.String()]
				chi += (o - e) * (o - e) / e
				cells++
			}
		}
		crit := distuv.ChiSquared{K: float64(cells - 1)}.Quantile(0.999)
		t.Logf("p=%d: enumerated sizes %v, chi-square %.1f on %d cells (0.999 quantile %.1f)", tc.p, d.Sizes, chi, cells, crit)
		if chi > crit {
			t.Errorf("p=%d: chi-square %.1f exceeds %.1f", tc.p, chi, crit)
		}
	}
}

// TestBatchDeterministic: a batch depends on the seed and its number only.
func TestBatchDeterministic(t *testing.T) {
	a, _ := NewDesign(30, Stop{}, false, 9)
	b, _ := NewDesign(30, Stop{}, false, 9)
	c, _ := NewDesign(30, Stop{}, false, 10)
	_ = a.Batch(0, BatchPairs)
	x, y, z := a.Batch(3, BatchPairs), b.Batch(3, BatchPairs), c.Batch(3, BatchPairs)
	same := true
	for k := range x {
		if x[k][0].String() != y[k][0].String() {
			t.Fatalf("same seed, pair %d of batch 3 differs", k)
		}
		same = same && x[k][0].String() == z[k][0].String()
	}
	if same {
		t.Error("seeds 9 and 10 drew the same batch")
	}
}

// TestDesignSizes: exact while 2^p - 2 fits the budget, otherwise the
// heaviest size pairs within min(1022, budget/2).
func TestDesignSizes(t *testing.T) {
	for _, tc := range []struct {
		p     int
		stop  Stop
		exact bool
		sizes []int
	}{
		{8, Stop{}, true, nil},
		{9, Stop{}, true, nil},
		{10, Stop{}, true, nil},                       // 1022 subsets
		{11, Stop{}, false, []int{1, 2, 3, 8, 9, 10}}, // 22 + 110 + 330 = 462; sizes 4 and 7 would add 660
		{20, Stop{}, false, []int{1, 2, 18, 19}},
		{30, Stop{}, false, []int{1, 2, 28, 29}}, // 60 + 870
		{32, Stop{}, false, []int{1, 31}},
		{100, Stop{}, false, []int{1, 99}},
		{100, Stop{Subsets: 350}, false, nil}, // 200 subsets of size 1 and 99 > 350/2
		{6, Stop{Subsets: 62}, true, nil},
		{6, Stop{Subsets: 61}, false, []int{1, 5}}, // 12 <= 61/2
		{4, Stop{MaxSubsets: 10}, false, nil},
	} {
		d, err := NewDesign(tc.p, tc.stop, false, 1)
		if err != nil {
			t.Fatal(err)
		}
		if d.Exact != tc.exact {
			t.Errorf("p=%d %+v: exact %v, want %v", tc.p, tc.stop, d.Exact, tc.exact)
			continue
		}
		if tc.exact {
			if len(d.Enumerated) != 1<<tc.p-2 || d.Mass != 1 {
				t.Errorf("p=%d: %d subsets, mass %v", tc.p, len(d.Enumerated), d.Mass)
			}
			continue
		}
		if !slices.Equal(d.Sizes, tc.sizes) {
			t.Errorf("p=%d %+v: sizes %v, want %v", tc.p, tc.stop, d.Sizes, tc.sizes)
		}
		want := 0.0
		for _, s := range d.Sizes {
			want += SizeProbs(tc.p)[s]
		}
		if math.Abs(d.Mass-want) > 1e-12 || len(d.Enumerated) > ExactBudget {
			t.Errorf("p=%d: mass %v, want %v; %d enumerated", tc.p, d.Mass, want, len(d.Enumerated))
		}
	}
	if _, err := NewDesign(25, Stop{}, true, 1); err == nil {
		t.Error("exact with p=25: no error")
	}
	if _, err := NewDesign(1, Stop{}, false, 1); err == nil {
		t.Error("p=1: no error")
	}
	// 75 pairs cannot identify 100 values: known before any model is fitted.
	if _, err := NewDesign(100, Stop{Subsets: 150}, false, 1); err == nil || !strings.Contains(err.Error(), "do not identify") {
		t.Errorf("150 subsets for 100 features: err = %v", err)
	}
}

// TestPlanWeights: the weights sum to 1, an enumerated subset (sizes 1 and
// 4 of p = 5) has its kernel weight, a sampled one drawn twice weighs twice
// as much as one drawn once, and the plan keeps within its cap.
func TestPlanWeights(t *testing.T) {
	d, _ := NewDesign(5, Stop{Subsets: 20}, false, 3)
	if !slices.Equal(d.Sizes, []int{1, 4}) {
		t.Fatalf("enumerated sizes %v, want [1 4]", d.Sizes)
	}
	pl := NewPlan(d)
	for range 5 {
		pl.Draw(20)
	}
	if len(pl.Subsets) > 20 || len(pl.Subsets) < 15 {
		t.Fatalf("%d subsets, want at most the cap of 20 and most of it", len(pl.Subsets))
	}
	times := make([]int, len(pl.Subsets))
	for _, pr := range pl.Pairs {
		times[pr[0]]++
		times[pr[1]]++
	}
	w := pl.Weights()
	sum := 0.0
	for k, v := range w {
		sum += v
		want := (1 - d.Mass) * float64(times[k]) / float64(2*len(pl.Pairs))
		if k < len(d.Enumerated) {
			want += KernelWeight(5, len(pl.Subsets[k]))
		}
		if math.Abs(v-want) > 1e-15 {
			t.Errorf("subset %v drawn %d times: weight %v, want %v", pl.Subsets[k], times[k], v, want)
		}
	}
	if math.Abs(sum-1) > 1e-12 {
		t.Errorf("weights sum to %v", sum)
	}
}
