package shapley

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Subset is a set of feature indices (0-based, sorted, no duplicates): the
// features a reduced model keeps.
type Subset []int

// String writes the subset as {1,4,7} (0-based indices).
func (s Subset) String() string {
	parts := make([]string, len(s))
	for i, j := range s {
		parts[i] = strconv.Itoa(j)
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// key is a map key for the subset.
func (s Subset) key() string { return s.String() }

// Complement returns the features of 0..p-1 not in s: the columns a
// reduced model on s replaces by their train means.
func (s Subset) Complement(p int) []int {
	in := make([]bool, p)
	for _, j := range s {
		in[j] = true
	}
	out := make([]int, 0, p-len(s))
	for j := range p {
		if !in[j] {
			out = append(out, j)
		}
	}
	return out
}

// KernelWeight is the Shapley kernel weight of one subset of size s among p
// features, normalised to a probability over the 2^p - 2 subsets with
// 0 < s < p:
//
//	w(S) = (p-1) / (C(p,s) s (p-s)) / Z  =  C(p-2, s-1)^-1 / sum_{t=1}^{p-1} C(p,t) C(p-2,t-1)^-1
//
// (C(p,s) s (p-s) = p (p-1) C(p-2, s-1), so the per-subset weight is
// proportional to C(p-2, s-1)^-1). It is 0 for s = 0 and s = p, which enter
// the least squares as constraints instead.
func KernelWeight(p, s int) float64 {
	if s <= 0 || s >= p {
		return 0
	}
	// Per subset: C(p-2,s-1)^-1 / sum_t C(p,t)/C(p-2,t-1)
	//           = C(p-2,s-1)^-1 / (p (p-1) sum_t 1/(t (p-t))).
	return math.Exp(-lnChoose(p-2, s-1)) / (float64(p) * float64(p-1) * harmonicPairs(p))
}

// SizeProbs returns the distribution of |S| when S is drawn with
// probability KernelWeight: P(|S| = s) = C(p,s) KernelWeight(p,s), which
// simplifies to
//
//	P(|S| = s) = [1/(s (p-s))] / sum_{t=1}^{p-1} 1/(t (p-t)),   s = 1..p-1.
//
// Index s of the result holds P(|S| = s); entries 0 and p are 0.
//
// This is not the distribution of the R package vimp's sample_subsets, which
// draws the size with probability proportional to C(p-2, s-1)^-1 (the
// per-subset weight) and then a uniform subset of that size; its per-subset
// probability is proportional to C(p-2,s-1)^-1 C(p,s)^-1, the kernel only
// when C(p,s) is the same for every s in 1..p-1, i.e. for p <= 3. For p = 4
// vimp gives sizes 1, 2, 3 probabilities (0.4, 0.2, 0.4) where the kernel
// gives (4/11, 3/11, 4/11).
func SizeProbs(p int) []float64 {
	out := make([]float64, p+1)
	z := harmonicPairs(p)
	for s := 1; s < p; s++ {
		out[s] = 1 / (float64(s) * float64(p-s)) / z
	}
	return out
}

// harmonicPairs is sum_{t=1}^{p-1} 1/(t (p-t)) = (2/p) H_{p-1}.
func harmonicPairs(p int) float64 {
	z := 0.0
	for t := 1; t < p; t++ {
		z += 1 / (float64(t) * float64(p-t))
	}
	return z
}

func lnChoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

// MaxExactFeatures bounds Enumerate: 2^p - 2 reduced models.
const MaxExactFeatures = 20

// Enumerate returns every subset with 0 < |S| < p, ordered by size, then
// lexicographically.
func Enumerate(p int) ([]Subset, error) {
	if p < 2 || p > MaxExactFeatures {
		return nil, fmt.Errorf("shapley: exact enumeration needs 2 to %d features, got %d", MaxExactFeatures, p)
	}
	var out []Subset
	for s := 1; s < p; s++ {
		out = append(out, ofSize(p, s)...)
	}
	return out, nil
}
