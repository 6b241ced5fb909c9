package shapley

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// TestSolveExactIsDefinition: with every subset weighted by the kernel the
// constrained least squares is the Shapley value's definition, for an
// arbitrary (non-additive) set function.
func TestSolveExactIsDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for p := 2; p <= 7; p++ {
		table := make([]float64, 1<<p)
		for m := range table {
			table[m] = rng.NormFloat64()
		}
		v := func(m uint32) float64 { return table[m] }
		want, err := Definition(p, v)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := NewPlan(p, 0, true, 1)
		if err != nil {
			t.Fatal(err)
		}
		g := Game{P: p, Subsets: pl.Subsets, Weights: pl.Weights, Empty: table[0], Full: table[1<<p-1]}
		for _, s := range pl.Subsets {
			g.Values = append(g.Values, v(s.Mask()))
		}
		f, err := Solve(g)
		if err != nil {
			t.Fatal(err)
		}
		sum := 0.0
		for j := range p {
			if math.Abs(f.Psi[j]-want[j]) > 1e-10 {
				t.Errorf("p=%d: psi_%d = %v, want %v", p, j, f.Psi[j], want[j])
			}
			sum += f.Psi[j]
		}
		if math.Abs(sum-(g.Full-g.Empty)) > 1e-12 {
			t.Errorf("p=%d: efficiency: sum %v, want %v", p, sum, g.Full-g.Empty)
		}
		// The coefficients reproduce psi (it is linear in the v's).
		for j := range p {
			r := f.CoefFull[j]*g.Full + f.CoefEmpty[j]*g.Empty
			for k := range g.Subsets {
				r += f.CoefSubset[k][j] * g.Values[k]
			}
			if math.Abs(r-f.Psi[j]) > 1e-10 {
				t.Errorf("p=%d: coefficients give %v for psi_%d = %v", p, r, j, f.Psi[j])
			}
		}
		// Exact enumeration leaves no sampling influence of an additive game.
		add := make([]float64, p)
		for j := range add {
			add[j] = rng.NormFloat64()
		}
		for k, s := range g.Subsets {
			g.Values[k] = g.Empty
			for _, j := range s {
				g.Values[k] += add[j]
			}
		}
		g.Full = g.Empty
		for _, a := range add {
			g.Full += a
		}
		f, _ = Solve(g)
		counts := make([]int, len(g.Subsets))
		for k := range counts {
			counts[k] = 1
		}
		for _, z := range SamplingInfluence(g, f, counts) {
			for _, v := range z {
				if math.Abs(v) > 1e-10 {
					t.Fatalf("p=%d: additive game has sampling influence %v", p, v)
				}
			}
		}
		for j := range p {
			if math.Abs(f.Psi[j]-add[j]) > 1e-10 {
				t.Errorf("p=%d: additive game: psi_%d = %v, want %v", p, j, f.Psi[j], add[j])
			}
		}
	}
}

// TestSolveSampledConverges: the sampled estimator approaches the Shapley
// values as draws grow, within its own sampling standard error.
func TestSolveSampledConverges(t *testing.T) {
	const p = 6
	rng := rand.New(rand.NewPCG(5, 6))
	table := make([]float64, 1<<p)
	for m := range table {
		// A game with interactions: v(S) = (sum of weights in S)^2 + noise.
		s := 0.0
		for j := range p {
			if m&(1<<j) != 0 {
				s += float64(j + 1)
			}
		}
		table[m] = s*s/100 + 0.1*rng.NormFloat64()
	}
	want, _ := Definition(p, func(m uint32) float64 { return table[m] })
	for _, draws := range []int{200, 5000} {
		pl := sampledPlan(t, p, draws, int64(draws))
		g := Game{P: p, Subsets: pl.Subsets, Weights: pl.Weights, Empty: table[0], Full: table[1<<p-1]}
		for _, s := range pl.Subsets {
			g.Values = append(g.Values, table[s.Mask()])
		}
		f, err := Solve(g)
		if err != nil {
			t.Fatal(err)
		}
		zeta := SamplingInfluence(g, f, pl.Counts)
		for j := range p {
			var m, m2 float64
			for _, z := range zeta {
				m += z[j]
				m2 += z[j] * z[j]
			}
			n := float64(len(zeta))
			se := math.Sqrt((m2 - m*m/n) / (n - 1) / n)
			if d := math.Abs(f.Psi[j] - want[j]); d > 4*se+1e-12 {
				t.Errorf("draws=%d: psi_%d = %v, want %v (se %v)", draws, j, f.Psi[j], want[j], se)
			}
		}
	}
}

func TestSolveNotIdentified(t *testing.T) {
	// Features 0 and 1 always appear together: their split is undetermined.
	g := Game{P: 3, Subsets: []Subset{{0, 1}, {2}}, Weights: []float64{0.5, 0.5}, Values: []float64{1, 2}, Empty: 0, Full: 3}
	_, err := Solve(g)
	if !errors.Is(err, ErrNotIdentified) {
		t.Errorf("err = %v, want ErrNotIdentified", err)
	}
}

// sampledPlan is a sampled plan even where NewPlan would enumerate.
func sampledPlan(t *testing.T, p, draws int, seed int64) *Plan {
	t.Helper()
	ds, err := Sample(rand.New(rand.NewPCG(uint64(seed), sampleStream)), p, draws)
	if err != nil {
		t.Fatal(err)
	}
	pl := &Plan{P: p, Draws: draws}
	for _, d := range ds {
		pl.Subsets = append(pl.Subsets, d.Subset)
		pl.Counts = append(pl.Counts, d.Count)
		pl.Weights = append(pl.Weights, float64(d.Count)/float64(draws))
	}
	return pl
}
