package shapley

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/lazyvi/lazyvi/framework"
)

// ExactBudget is the number of reduced models a Shapley estimate may spend
// on enumeration: every subset while 2^p - 2 <= ExactBudget (p <= 10), and
// otherwise the heaviest subset sizes while their count stays within it.
const ExactBudget = 1022

// DefaultMaxSubsets is the default cap on the reduced models of a sampled
// estimate (enumerated and sampled subsets together).
const DefaultMaxSubsets = 16384

// BatchPairs is the number of complement pairs drawn per batch; the
// stopping rule is checked after each batch.
const BatchPairs = 32

// MinPairs is the floor of the sampling for p features: the stopping rule
// is not checked before max(64, 2p) pairs, so that the sampling standard
// errors it reads rest on enough pairs, both in number (their relative
// error is about 1/sqrt(2 N), 9% for 64) and against the p - 1 values the
// pairs' residuals are fitted to. On the appendix's p = 100 design, 64
// pairs gave sampling SEs half those of 200 pairs and 13 of 95 null
// features outside 2 SE of 0; 200 pairs gave 6 of 95.
func MinPairs(p int) int { return max(2*BatchPairs, 2*p) }

// pairStream is the second PCG word of a batch's sampler; the first is the
// run's seed mixed with the batch number.
const pairStream = 0x5a4b1e75ba3d1e01

// Design is where a Shapley estimate's subsets come from: every subset
// (Exact), or the subsets of the enumerated sizes with their exact kernel
// weights plus complement pairs sampled from the kernel restricted to the
// other sizes, drawn in batches. Batch b depends on the seed and b alone, so
// the subsets do not depend on scheduling.
type Design struct {
	P     int
	Exact bool
	// Sizes are the enumerated subset sizes (every size 1..p-1 when Exact),
	// Enumerated their subsets in order of size, Weights their kernel
	// weights (KernelWeight) and Mass the sum of Weights: the share of the
	// kernel that is not sampled.
	Sizes      []int
	Enumerated []Subset
	Weights    []float64
	Mass       float64
	// Stop says when the sampling of a design that is not exact stops.
	Stop Stop

	seed int64
	cdf  []float64 // over sampled sizes: cdf[i] = P(size <= sampled[i])
	smp  []int     // the sampled sizes, ascending
}

// NewDesign returns the design of an estimate on p features that stops as
// stop says: every subset when exact is set, or when 2^p - 2 is within both
// ExactBudget and the budget (stop's cap, or its fixed number of subsets,
// which alone bounds the enumeration); otherwise the size pairs {1, p-1},
// {2, p-2}, ... (heaviest first) enumerated while their count stays within
// min(ExactBudget, budget/2), and the other sizes sampled.
func NewDesign(p int, stop Stop, exact bool, seed int64) (*Design, error) {
	if p < 2 {
		return nil, framework.Usagef("shapley values need at least 2 features, got %d", p)
	}
	if stop.Subsets < 0 || stop.MaxSubsets < 0 {
		return nil, framework.Usagef("the number of subsets must be positive, got %d (cap %d)", stop.Subsets, stop.MaxSubsets)
	}
	budget := stop.budget()
	limit := min(budget, ExactBudget)
	if stop.Subsets > 0 {
		limit = budget
	}
	if !exact && p < 63 && uint64(1)<<p-2 <= uint64(limit) {
		exact = true
	}
	d := &Design{P: p, Exact: exact, Stop: stop, seed: seed}
	if exact {
		if p > MaxExactFeatures {
			return nil, framework.Usagef("exact Shapley values need 2^p - 2 reduced models; %d features are too many (at most %d)", p, MaxExactFeatures)
		}
		for s := 1; s < p; s++ {
			d.Sizes = append(d.Sizes, s)
		}
	} else {
		d.Sizes = heavySizes(p, min(ExactBudget, budget/2))
	}
	for _, s := range d.Sizes {
		w := KernelWeight(p, s)
		for _, sub := range ofSize(p, s) {
			d.Enumerated = append(d.Enumerated, sub)
			d.Weights = append(d.Weights, w)
			d.Mass += w
		}
	}
	if exact {
		d.Mass = 1
		return d, nil
	}
	probs := SizeProbs(p)
	acc := 0.0
	for s := 1; s < p; s++ {
		if !slices.Contains(d.Sizes, s) {
			acc += probs[s]
			d.smp = append(d.smp, s)
			d.cdf = append(d.cdf, acc)
		}
	}
	for i := range d.cdf {
		d.cdf[i] /= acc
	}
	d.cdf[len(d.cdf)-1] = 1
	if budget <= 8*p {
		// Few subsets may leave values undetermined; that depends on the
		// subsets alone: find out before any model is fitted.
		pl := NewPlan(d)
		for len(pl.Subsets) < budget && pl.Draw(budget) > 0 {
		}
		g := Game{P: p, Subsets: pl.Subsets, Weights: pl.Weights(), Values: make([]float64, len(pl.Subsets))}
		if _, err := Solve(g); errors.Is(err, ErrNotIdentified) {
			return nil, framework.Usagef("%w: %d subsets for %d features are too few", err, len(pl.Subsets), p)
		}
	}
	return d, nil
}

// heavySizes returns the sizes {1, p-1}, {2, p-2}, ... in order, as long as
// the count of their subsets stays within budget and at least one size is
// left to sample.
func heavySizes(p, budget int) []int {
	var out []int
	count := 0.0
	for s := 1; 2*s < p; s++ {
		n := 2 * math.Exp(lnChoose(p, s))
		if count+n > float64(budget)+0.5 || 2*(s+1) > p {
			break
		}
		count += n
		out = append(out, s, p-s)
	}
	slices.Sort(out)
	return out
}

// ofSize returns every subset of size s of 0..p-1 in lexicographic order.
func ofSize(p, s int) []Subset {
	var out []Subset
	comb := make([]int, s)
	for i := range comb {
		comb[i] = i
	}
	for {
		out = append(out, Subset(slices.Clone(comb)))
		i := s - 1
		for i >= 0 && comb[i] == p-s+i {
			i--
		}
		if i < 0 {
			return out
		}
		comb[i]++
		for k := i + 1; k < s; k++ {
			comb[k] = comb[k-1] + 1
		}
	}
}

// Pair is a sampled subset and its complement.
type Pair [2]Subset

// Batch returns the n complement pairs of batch b: a size s drawn from the
// sampled sizes with probability proportional to 1/(s (p-s)) (the kernel's
// mass of size s), a uniform subset S of that size (a partial Fisher-Yates
// shuffle) and its complement. The pairs depend on the seed and b only.
func (d *Design) Batch(b, n int) []Pair {
	if d.Exact {
		return nil
	}
	const golden = 0x9e3779b97f4a7c15
	rng := rand.New(rand.NewPCG(uint64(d.seed)^(uint64(b)+1)*golden, pairStream))
	p := d.P
	perm := make([]int, p)
	out := make([]Pair, n)
	for k := range out {
		u := rng.Float64()
		i := 0
		for i < len(d.cdf)-1 && u >= d.cdf[i] {
			i++
		}
		s := d.smp[i]
		for j := range perm {
			perm[j] = j
		}
		for i := range s {
			k := i + rng.IntN(p-i)
			perm[i], perm[k] = perm[k], perm[i]
		}
		in := Subset(slices.Clone(perm[:s]))
		slices.Sort(in)
		out[k] = Pair{in, in.Complement(p)}
	}
	return out
}
