package shapley

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/stat"
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
		d, err := NewDesign(p, Stop{}, true, 1)
		if err != nil {
			t.Fatal(err)
		}
		pl := NewPlan(d)
		g := Game{P: p, Subsets: pl.Subsets, Weights: pl.Weights(), Empty: table[0], Full: table[1<<p-1]}
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
		pairs := make([][2]int, 0, len(g.Subsets)/2)
		for k := range len(g.Subsets) / 2 {
			pairs = append(pairs, [2]int{k, len(g.Subsets) - 1 - k}) // S and its complement
		}
		for j, se := range PairSamplingSE(g, f, pairs, 0) {
			if se > 1e-10 {
				t.Fatalf("p=%d: additive game has sampling se %v for feature %d", p, se, j)
			}
		}
		for j := range p {
			if math.Abs(f.Psi[j]-add[j]) > 1e-10 {
				t.Errorf("p=%d: additive game: psi_%d = %v, want %v", p, j, f.Psi[j], add[j])
			}
		}
	}
}

// interactionGame is a game on p features with interactions: v(S) =
// (sum of (j+1) over S)^2 / 100 plus noise, one value per subset mask.
func interactionGame(p int, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 6))
	table := make([]float64, 1<<p)
	for m := range table {
		s := 0.0
		for j := range p {
			if m&(1<<j) != 0 {
				s += float64(j + 1)
			}
		}
		table[m] = s*s/100 + 0.1*rng.NormFloat64()
	}
	return table
}

// solvePlan solves the game table on the plan's subsets, with the
// sampling SEs over its pairs.
func solvePlan(t *testing.T, table []float64, pl *Plan) (*Fit, []float64) {
	t.Helper()
	p := pl.Design.P
	g := Game{P: p, Subsets: pl.Subsets, Weights: pl.Weights(), Empty: table[0], Full: table[1<<p-1]}
	for _, s := range pl.Subsets {
		g.Values = append(g.Values, table[s.Mask()])
	}
	f, err := Solve(g)
	if err != nil {
		t.Fatal(err)
	}
	return f, PairSamplingSE(g, f, pl.Pairs, pl.Design.Mass)
}

// drawPlan draws a sampled plan of at most max subsets.
func drawPlan(t *testing.T, p, max int, seed int64) *Plan {
	t.Helper()
	d, err := NewDesign(p, Stop{Subsets: max}, false, seed)
	if err != nil {
		t.Fatal(err)
	}
	if d.Exact {
		t.Fatalf("p=%d, %d subsets: exact design", p, max)
	}
	pl := NewPlan(d)
	for len(pl.Subsets) < max && pl.Draw(max) > 0 {
	}
	return pl
}

// TestPairSamplingSECalibrated: on a game with interactions (p = 12, sizes
// {1, 11} enumerated, the rest sampled in pairs), the sampled values are
// centred on the Shapley values and their sampling SEs are calibrated: over
// 300 seeds the z-scores (psi - exact)/se have mean 0 and standard
// deviation 1 within Monte Carlo error (the sd of an sd from 300 normal
// draws is 0.04; the first-order SE leaves a few percent of bias at 300
// subsets).
func TestPairSamplingSECalibrated(t *testing.T) {
	const p, reps = 12, 300
	table := interactionGame(p, 5)
	want, _ := Definition(p, func(m uint32) float64 { return table[m] })
	zs := make([][]float64, p)
	for r := range reps {
		pl := drawPlan(t, p, 300, int64(r+1))
		f, se := solvePlan(t, table, pl)
		for j := range p {
			zs[j] = append(zs[j], (f.Psi[j]-want[j])/se[j])
		}
	}
	for j, z := range zs {
		mean, sd := stat.MeanStdDev(z, nil)
		t.Logf("feature %d: z mean %.3f sd %.3f", j, mean, sd)
		if math.Abs(mean) > 4/math.Sqrt(reps)+0.1 || sd < 0.85 || sd > 1.2 {
			t.Errorf("feature %d: z-scores mean %.3f sd %.3f over %d seeds, want about 0 and 1", j, mean, sd, reps)
		}
	}
}

// TestSolveSampledConverges: the sampled values approach the Shapley values
// as subsets grow, within their own sampling standard errors.
func TestSolveSampledConverges(t *testing.T) {
	const p = 12
	table := interactionGame(p, 7)
	want, _ := Definition(p, func(m uint32) float64 { return table[m] })
	prev := math.Inf(1)
	for _, n := range []int{300, 3000} {
		f, se := solvePlan(t, table, drawPlan(t, p, n, int64(n)))
		worst := 0.0
		for j := range p {
			if d := math.Abs(f.Psi[j] - want[j]); d > 4*se[j] {
				t.Errorf("%d subsets: psi_%d = %v, want %v (se %v)", n, j, f.Psi[j], want[j], se[j])
			}
			worst = math.Max(worst, se[j])
		}
		if worst >= prev/2 {
			t.Errorf("%d subsets: largest sampling se %v, not below half of %v", n, worst, prev)
		}
		prev = worst
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
