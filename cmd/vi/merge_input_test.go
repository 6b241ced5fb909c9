package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/pipeline"
)

// TestMergeRefusesDamagedShards: vi merge given a shard whose index is out
// of range, or whose result lacks its p-value or holds one outside
// [0, 1], exits 2 with one line naming the file; its help names no flag
// it does not take.
func TestMergeRefusesDamagedShards(t *testing.T) {
	dir := t.TempDir()
	feats := []string{"a", "b", "c"}
	shard := func(name string, index int, edit func(map[string]any)) string {
		lo, hi := pipeline.Shard{Index: index, Count: 2}.Bounds(len(feats))
		if index < 0 || index >= 2 {
			lo, hi = 0, 1
		}
		r := pipeline.Report{Inference: "split", Adjust: "none",
			Shard: &pipeline.ShardInfo{Shard: pipeline.Shard{Index: index, Count: 2}, Features: feats, Run: "fp"}}
		for _, f := range feats[lo:hi] {
			r.Results = append(r.Results, inference.Result{Feature: f, Estimator: "lazy", VI: 1, SE: 0.5, PValue: 0.02})
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		json.Unmarshal(b, &m)
		if edit != nil {
			edit(m["results"].([]any)[0].(map[string]any))
		}
		b, _ = json.Marshal(m)
		writeFile(t, filepath.Join(dir, name), string(b))
		return name
	}
	s1 := shard("s1.json", 0, nil)
	for _, c := range []struct {
		name, file, want string
	}{
		{"index 5", shard("i5.json", 5, nil), "vi: i5.json: shard.index 6 is out of range for shard.count 2 (want 1 to 2)"},
		{"index -1", shard("im1.json", -1, nil), "vi: im1.json: shard.index 0 is out of range"},
		{"no p_value", shard("nop.json", 1, func(r map[string]any) { delete(r, "p_value") }), `vi: nop.json: result 1 ("lazy", "b") has no p_value`},
		{"no se", shard("nose.json", 1, func(r map[string]any) { delete(r, "se") }), `vi: nose.json: result 1 ("lazy", "b") has no se`},
		{"p_value 2", shard("p2.json", 1, func(r map[string]any) { r["p_value"] = 2 }), `vi: p2.json: result 1 ("lazy", "b"): p_value 2 is outside [0, 1]`},
	} {
		_, stderr, code := vi(t, dir, "merge", s1, c.file)
		if code != 2 || !strings.HasPrefix(stderr, c.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 and one line %q", c.name, code, stderr, c.want)
		}
	}
	help, _, _ := vi(t, dir, "merge", "--help")
	if !strings.Contains(help, "usage: vi merge") || strings.Contains(help, "(--adjust)") {
		t.Errorf("vi merge --help names --adjust as its own flag:\n%s", help)
	}
}
