package pipeline

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
	"strings"
	"testing"
	"time"
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
	// Every shard of a run claims 2^40 shards.
	p := shardReports(whole, feats, 3)
	for i := range p {
		r := *p[i].Report
		r.Shard = &ShardInfo{Shard: Shard{Index: i, Count: 1 << 40}, Features: feats, Run: "fp"}
		r.Results = nil
		p[i].Report = &r
	}
	start := time.Now()
	err := mergeNoPanic(p)
	if err == nil || !strings.Contains(err.Error(), "and 1099511627763 more") || time.Since(start) > 10*time.Second {
		t.Errorf("2^40 shards: err %v after %v, want the first missing shards named at once", err, time.Since(start))
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
