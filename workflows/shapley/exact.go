package shapley

import (
	"fmt"
	"math"
)

// Definition returns the Shapley values of the set function v on p features
// by their definition,
//
//	psi_j = sum_{S subset of [p] \ {j}} (1/p) C(p-1, |S|)^-1 [v(S u {j}) - v(S)],
//
// calling v once per subset (2^p calls; p <= MaxExactFeatures). v receives
// the subset as a bit mask (bit j set: feature j kept). It is the reference
// the least-squares estimator is tested against.
func Definition(p int, v func(mask uint32) float64) ([]float64, error) {
	if p < 1 || p > MaxExactFeatures {
		return nil, fmt.Errorf("shapley: the definition needs 1 to %d features, got %d", MaxExactFeatures, p)
	}
	n := uint32(1) << p
	vals := make([]float64, n)
	for m := range n {
		vals[m] = v(m)
	}
	psi := make([]float64, p)
	for j := range p {
		bit := uint32(1) << j
		for m := range n {
			if m&bit != 0 {
				continue
			}
			s := popcount(m)
			w := math.Exp(-lnChoose(p-1, s)) / float64(p)
			psi[j] += w * (vals[m|bit] - vals[m])
		}
	}
	return psi, nil
}

func popcount(m uint32) int {
	c := 0
	for m != 0 {
		m &= m - 1
		c++
	}
	return c
}

// Mask returns the subset's bit mask (p <= 32).
func (s Subset) Mask() uint32 {
	var m uint32
	for _, j := range s {
		m |= 1 << j
	}
	return m
}
