package pipeline

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
)

func FuzzReadShardReport(f *testing.F) {
	feats := []string{"a", "b", "c", "d", "e"}
	for _, adj := range []inference.Adjust{inference.AdjustNone, inference.AdjustHolm} {
		for _, nr := range shardReports(wholeReport(feats, adj), feats, 2) {
			b, err := json.Marshal(nr.Report)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	b, _ := json.Marshal(wholeReport(feats, inference.AdjustNone))
	for _, s := range []string{string(b), `{"shard":{"index":5,"count":3,"features":["a"],"run":"r"},"results":[]}`,
		`{"shard":{"index":0,"count":2,"features":["a","b"],"run":"r"},"results":[{"feature":"a","estimator":"lazy","vi":1,"se":0,"ci_low":0,"ci_high":2}]}`,
		"", "{", "null", "[]"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		const source = "s.json"
		r, err := ReadShardReport(bytes.NewReader(data), source)
		if err != nil {
			// A one-line, short *InputError naming the file.
			var ie *dataio.InputError
			s := err.Error()
			if !errors.As(err, &ie) || !errors.Is(err, framework.ErrUsage) || ie.File != source || !strings.HasPrefix(s, source+": ") || strings.ContainsAny(s, "\r\n") || len(s) > 512 {
				t.Fatalf("want a one-line *InputError naming %s, got %T %.600q", source, err, s)
			}
			return
		}
		// Merged alone (the other shards missing, or a run of one slice):
		// a report or a usage error, never a panic.
		if _, err := MergeReports([]NamedReport{{Name: source, Report: r}}); err != nil && !errors.Is(err, framework.ErrUsage) {
			t.Fatalf("merge: %T %v is not a usage error", err, err)
		}
		// Written again, it reads back the same.
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("a shard report read does not write: %v", err)
		}
		r2, err := ReadShardReport(bytes.NewReader(b), source)
		if err != nil {
			t.Fatalf("a shard report written again does not read back: %v", err)
		}
		b2, _ := json.Marshal(r2)
		if !bytes.Equal(b, b2) {
			t.Fatalf("round trip changed the report:\n%s\n%s", b, b2)
		}
	})
}

// FuzzShardCounts: a shard report edited to any index and count (and a
// run of any number of features) merges with the other shards of its run
// into a report, or is refused with a usage error; never a panic, never
// a loop or an allocation the size of the count. Bounds of any shard of
// any number of items stay within them, and consecutive shards meet.
func FuzzShardCounts(f *testing.F) {
	f.Add(1, 3, uint8(5), 10)
	f.Add(int(2e18), int(2e18), uint8(5), 5)
	f.Add(-1, 3, uint8(5), -4)
	f.Add(1<<62, 1<<62+1, uint8(0), 1<<62)
	f.Fuzz(func(t *testing.T, index, count int, features uint8, n int) {
		s := Shard{Index: index, Count: count}
		lo, hi := s.Bounds(n)
		if lo < 0 || hi < lo || hi > max(n, 0) {
			t.Fatalf("%+v.Bounds(%d) = [%d, %d)", s, n, lo, hi)
		}
		if !s.Whole() && index >= 0 && index < count-1 && n >= 0 {
			if next, _ := (Shard{Index: index + 1, Count: count}).Bounds(n); next != hi {
				t.Fatalf("%+v.Bounds(%d) ends at %d, the next shard starts at %d", s, n, hi, next)
			}
		}
		feats := make([]string, int(features)%16+1)
		for i := range feats {
			feats[i] = string(rune('a' + i))
		}
		reports := shardReports(wholeReport(feats, inference.AdjustHolm), feats, min(3, len(feats)))
		if len(reports) < 2 {
			return
		}
		r := *reports[0].Report
		r.Shard = &ShardInfo{Shard: s, Features: feats, Run: "fp"}
		reports[0].Report = &r
		b, err := json.Marshal(&r)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ReadShardReport(bytes.NewReader(b), "s1.json"); err != nil && !errors.Is(err, framework.ErrUsage) {
			t.Fatalf("read: %T %v is not a usage error", err, err)
		}
		if _, err := MergeReports(reports); err != nil && !errors.Is(err, framework.ErrUsage) {
			t.Fatalf("merge: %T %v is not a usage error", err, err)
		}
	})
}
