package pipeline

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
)

// TestShardBounds: the slices of any count cover 0..n-1 once each, in
// order, and differ in size by at most one.
func TestShardBounds(t *testing.T) {
	for n := 0; n <= 23; n++ {
		for count := 1; count <= 9; count++ {
			next, minSz, maxSz := 0, n+1, -1
			for k := 0; k < count; k++ {
				lo, hi := Shard{Index: k, Count: count}.Bounds(n)
				if lo != next || hi < lo {
					t.Fatalf("n %d, shard %d/%d: [%d, %d), want to start at %d", n, k+1, count, lo, hi, next)
				}
				next = hi
				minSz, maxSz = min(minSz, hi-lo), max(maxSz, hi-lo)
			}
			if next != n || maxSz-minSz > 1 {
				t.Fatalf("n %d, %d shards: end %d, sizes %d..%d", n, count, next, minSz, maxSz)
			}
		}
	}
}

// TestShardBoundsHuge: the slices of any count cover the items once each, in
// order, without overflow however large the count and the items; an
// index outside the count has no items.
func TestShardBoundsHuge(t *testing.T) {
	for _, c := range []struct{ count, n int }{{3, 10}, {7, 7}, {2, math.MaxInt}, {math.MaxInt, math.MaxInt}, {1 << 62, 5}, {2e18, 2e18 + 3}} {
		for _, k := range []int{0, 1, c.count / 2, c.count - 2, c.count - 1} {
			if k < 0 {
				continue
			}
			lo, hi := Shard{Index: k, Count: c.count}.Bounds(c.n)
			if lo < 0 || hi < lo || hi > c.n {
				t.Errorf("shard %d of %d, %d items: [%d, %d) is outside [0, %d]", k, c.count, c.n, lo, hi, c.n)
			}
			if k == c.count-1 && hi != c.n {
				t.Errorf("last shard of %d, %d items: ends at %d", c.count, c.n, hi)
			}
			if k+1 < c.count {
				if next, _ := (Shard{Index: k + 1, Count: c.count}).Bounds(c.n); next != hi {
					t.Errorf("shard %d of %d, %d items, ends at %d; the next starts at %d", k, c.count, c.n, hi, next)
				}
			}
		}
	}
	for _, s := range []Shard{{Index: -1, Count: 3}, {Index: 3, Count: 3}, {Index: math.MaxInt, Count: 5}} {
		if lo, hi := s.Bounds(10); lo != hi {
			t.Errorf("%+v: [%d, %d), want an empty range", s, lo, hi)
		}
	}
}

// shardReports cuts a whole report of feats features and two estimators
// into count shard reports, as Run with Shard would write them.
func shardReports(whole *Report, feats []string, count int) []NamedReport {
	var out []NamedReport
	for k := 0; k < count; k++ {
		s := Shard{Index: k, Count: count}
		lo, hi := s.Bounds(len(feats))
		r := *whole
		r.Results = nil
		for _, res := range whole.Results {
			for _, f := range feats[lo:hi] {
				if res.Feature == f {
					res.PAdjusted = nil
					r.Results = append(r.Results, res)
				}
			}
		}
		r.Shard = &ShardInfo{Shard: s, Features: feats, Run: "fp"}
		r.Full.Seconds = float64(k) // timings differ between shards
		out = append(out, NamedReport{Name: fmt.Sprintf("s%d.json", k+1), Report: &r})
	}
	return out
}

func wholeReport(feats []string, adjust inference.Adjust) *Report {
	r := &Report{RunInfo: RunInfo{Measure: "mse", N: 10}, Inference: "split", Adjust: adjust.String()}
	for ei, est := range []string{"lazy", "dropout"} {
		var ps []float64
		for j, f := range feats {
			p := float64((j*7+ei*3)%11) / 40
			ps = append(ps, p)
			r.Results = append(r.Results, inference.Result{Feature: f, Estimator: est, VI: float64(j), PValue: p})
		}
		if adjust != inference.AdjustNone {
			for j, a := range inference.AdjustPValues(ps, adjust) {
				v := a
				r.Results[ei*len(feats)+j].PAdjusted = &v
			}
		}
	}
	return r
}

func TestMergeReports(t *testing.T) {
	feats := []string{"a", "b", "c", "d", "e", "f", "g"}
	for _, adj := range []inference.Adjust{inference.AdjustNone, inference.AdjustHolm, inference.AdjustBH} {
		whole := wholeReport(feats, adj)
		parts := shardReports(whole, feats, 3)
		// any order of the files
		parts[0], parts[2] = parts[2], parts[0]
		got, err := MergeReports(parts)
		if err != nil {
			t.Fatal(err)
		}
		if got.Shard != nil || len(got.Results) != len(whole.Results) {
			t.Fatalf("%v: merged %d results (shard %v), want %d", adj, len(got.Results), got.Shard, len(whole.Results))
		}
		for i, r := range got.Results {
			w := whole.Results[i]
			if r.Feature != w.Feature || r.Estimator != w.Estimator || r.VI != w.VI {
				t.Fatalf("%v: result %d is %s/%s, want %s/%s", adj, i, r.Estimator, r.Feature, w.Estimator, w.Feature)
			}
			if (r.PAdjusted == nil) != (w.PAdjusted == nil) || (r.PAdjusted != nil && *r.PAdjusted != *w.PAdjusted) {
				t.Fatalf("%v: result %d p_adjusted %v, want %v", adj, i, r.PAdjusted, w.PAdjusted)
			}
		}
	}
}

func TestMergeReportsRefuses(t *testing.T) {
	feats := []string{"a", "b", "c", "d", "e"}
	whole := wholeReport(feats, inference.AdjustHolm)
	for _, c := range []struct {
		name  string
		parts func() []NamedReport
		want  string
	}{
		{"missing", func() []NamedReport { p := shardReports(whole, feats, 3); return append(p[:1], p[2]) }, "missing shard 2/3: features b, c"},
		{"overlap", func() []NamedReport { p := shardReports(whole, feats, 3); return append(p, p[1]) }, "s2.json: overlaps s2.json: both hold shard 2/3"},
		{"other run", func() []NamedReport {
			p := shardReports(whole, feats, 3)
			p[1].Report.Shard = &ShardInfo{Shard: p[1].Report.Shard.Shard, Features: feats, Run: "other"}
			return p
		}, "s2.json: is a shard of another run than s1.json"},
		{"other count", func() []NamedReport {
			p := shardReports(whole, feats, 3)
			return append(p, shardReports(whole, feats, 2)[1])
		}, "of 2 shards"},
		{"other settings", func() []NamedReport {
			p := shardReports(whole, feats, 2)
			r := *p[1].Report
			r.Level = 0.9
			p[1].Report = &r
			return p
		}, "s2.json: was run with other settings"},
		{"whole", func() []NamedReport { return []NamedReport{{Name: "w.json", Report: whole}} }, "w.json: is the report of a whole run"},
		{"wrong slice", func() []NamedReport {
			p := shardReports(whole, feats, 2)
			r := *p[1].Report
			r.Results = r.Results[1:]
			p[1].Report = &r
			return p
		}, "s2.json: shard 2/2 should hold features c, d, e for lazy, holds d, e"},
	} {
		_, err := MergeReports(c.parts())
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want %q", c.name, err, c.want)
		}
		if err != nil && !errors.Is(err, framework.ErrUsage) {
			t.Errorf("%s: %T is not a usage or input error", c.name, err)
		}
	}
}
