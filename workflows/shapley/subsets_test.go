package shapley

import (
	"math"
	"testing"
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
