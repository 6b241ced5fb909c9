package pipeline

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
	"math"
	"strings"
	"testing"
)

// TestMergeReportsShardRange: a shard whose index is out of its count's
// range, or whose count is no count of shards, is an input error naming
// the file, never a panic; a huge count names a few missing shards at
// once.
func TestMergeReportsShardRange(t *testing.T) {
	feats := []string{"a", "b", "c", "d", "e"}
	whole := wholeReport(feats, inference.AdjustHolm)
	for _, c := range []struct {
		name         string
		index, count int
		want         string
	}{
		{"index 5 of 3", 5, 3, "s2.json: shard.index 6 is out of range for shard.count 3 (want 1 to 3)"},
		{"index -1", -1, 3, "s2.json: shard.index 0 is out of range"},
		{"index 3 of 3", 3, 3, "s2.json: shard.index 4 is out of range"},
		{"count 1", 0, 1, "s2.json: shard.count 1"},
		{"count 0", 0, 0, "s2.json: shard.count 0"},
	} {
		p := shardReports(whole, feats, 3)
		r := *p[1].Report
		r.Shard = &ShardInfo{Shard: Shard{Index: c.index, Count: c.count}, Features: feats, Run: "fp"}
		p[1].Report = &r
		err := mergeNoPanic(p)
		if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, framework.ErrUsage) {
			t.Errorf("%s: err %v, want an input error with %q", c.name, err, c.want)
		}
	}
	// An edited shard: index = count = 2e18, or a count beyond the
	// features (vi estimate makes at most one shard per feature).
	for _, c := range []struct {
		index, count int
		want         string
	}{
		{2e18 - 1, 2e18, "shard.count 2000000000000000000 is more than the run's 5 features"},
		{2e18, 2e18, "shard.index 2000000000000000001 is out of range"},
		{1, 1 << 40, "shard.count 1099511627776 is more than the run's 5 features"},
		{math.MaxInt, math.MinInt, "shard.count -9223372036854775808"},
	} {
		p := shardReports(whole, feats, 3)
		for i := range p {
			r := *p[i].Report
			r.Shard = &ShardInfo{Shard: Shard{Index: c.index, Count: c.count}, Features: feats, Run: "fp"}
			p[i].Report = &r
		}
		if err := mergeNoPanic(p); err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, framework.ErrUsage) {
			t.Errorf("index %d, count %d: err %v, want an input error with %q", c.index, c.count, err, c.want)
		}
	}
	// 40 features in 40 shards, 3 of them given: a few missing shards
	// named at once.
	many := make([]string, 40)
	for i := range many {
		many[i] = fmt.Sprintf("f%d", i)
	}
	p := shardReports(wholeReport(many, inference.AdjustHolm), many, 40)[:3]
	if err := mergeNoPanic(p); err == nil || !strings.Contains(err.Error(), "missing shard 4/40, 5/40,") || !strings.Contains(err.Error(), "and 27 more: features f3, f4,") {
		t.Errorf("3 of 40 shards: err %v, want the first missing shards named", err)
	}
}

func mergeNoPanic(p []NamedReport) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	_, err = MergeReports(p)
	return err
}

// TestReadShardReportFields: a shard report whose result lacks a field
// (which would read as 0: a p-value of 0 is "highly significant") or
// holds a p-value outside [0, 1] or a negative standard error is an
// input error naming the file, the result and the field.
func TestReadShardReportFields(t *testing.T) {
	feats := []string{"a", "b", "c"}
	p := shardReports(wholeReport(feats, inference.AdjustNone), feats, 2)
	good, err := json.Marshal(p[0].Report)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ReadShardReport(strings.NewReader(string(good)), "s1.json"); err != nil {
		t.Fatalf("a good shard: %v", err)
	}
	edit := func(f func(map[string]any)) string {
		var m map[string]any
		json.Unmarshal(good, &m)
		f(m["results"].([]any)[0].(map[string]any))
		b, _ := json.Marshal(m)
		return string(b)
	}
	for _, c := range []struct {
		name string
		json string
		want string
	}{
		{"no p_value", edit(func(r map[string]any) { delete(r, "p_value") }), `s1.json: result 1 ("lazy", "a") has no p_value`},
		{"null p_value", edit(func(r map[string]any) { r["p_value"] = nil }), `s1.json: result 1 ("lazy", "a") has no p_value`},
		{"no se", edit(func(r map[string]any) { delete(r, "se") }), `has no se`},
		{"no vi", edit(func(r map[string]any) { delete(r, "vi") }), `has no vi`},
		{"p_value 1.5", edit(func(r map[string]any) { r["p_value"] = 1.5 }), `s1.json: result 1 ("lazy", "a"): p_value 1.5 is outside [0, 1]`},
		{"p_value -0.1", edit(func(r map[string]any) { r["p_value"] = -0.1 }), `p_value -0.1 is outside [0, 1]`},
		{"se -1", edit(func(r map[string]any) { r["se"] = -1 }), `se -1 is not a finite number >= 0`},
		{"not json", "{", "s1.json: not a JSON report of vi estimate"},
	} {
		_, err := ReadShardReport(strings.NewReader(c.json), "s1.json")
		if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, framework.ErrUsage) {
			t.Errorf("%s: err %v, want an input error with %q", c.name, err, c.want)
		}
	}
}
