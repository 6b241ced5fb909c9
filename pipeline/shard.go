package pipeline

import (
	"fmt"
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
// items.
func (s Shard) Bounds(n int) (lo, hi int) {
	if s.Whole() {
		return 0, n
	}
	return s.Index * n / s.Count, (s.Index + 1) * n / s.Count
}
