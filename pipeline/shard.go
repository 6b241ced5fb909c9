package pipeline

import (
	"fmt"
	"math/bits"
)

// A Shard is one of Count slices of a run's work (its features, or
// Shapley's subsets): Index runs from 0 to Count-1. The zero value and
// Count 1 mean the whole run.
//
// Shards are contiguous: slice k of n items is [k*n/Count, (k+1)*n/Count),
// so the slices of any Count cover the items once each, in order, and
// differ in size by at most one.
type Shard struct {
	Index int `json:"index"`
	Count int `json:"count"`
}

// Whole reports whether s is the whole run.
func (s Shard) Whole() bool { return s.Count <= 1 }

// String is the 1-based form vi's --shard takes: "K/N".
func (s Shard) String() string {
	if s.Whole() {
		return "1/1"
	}
	return fmt.Sprintf("%d/%d", s.Index+1, s.Count)
}

// Bounds returns the half-open range [lo, hi) of the shard's slice of n
// items. The products Index*n are taken in 128 bits, so that no count
// overflows; a shard whose Index is outside 0..Count-1 (or n < 0) has an
// empty range.
func (s Shard) Bounds(n int) (lo, hi int) {
	if s.Whole() {
		return 0, max(n, 0)
	}
	if s.Index < 0 || s.Index >= s.Count || n <= 0 {
		return 0, 0
	}
	return mulDiv(s.Index, n, s.Count), mulDiv(s.Index+1, n, s.Count)
}

// mulDiv returns a*b/c for 0 <= a <= c and b >= 0, c > 0, without
// overflow: the product is 128 bits and the quotient at most b.
func mulDiv(a, b, c int) int {
	h, l := bits.Mul64(uint64(a), uint64(b))
	q, _ := bits.Div64(h, l, uint64(c))
	return int(q)
}
