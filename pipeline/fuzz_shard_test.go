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
			var ie *dataio.InputError
			if !errors.As(err, &ie) || !errors.Is(err, framework.ErrUsage) || ie.File != source {
				t.Fatalf("want an *InputError about %s, got %T %v", source, err, err)
			}
			if s := err.Error(); strings.ContainsAny(s, "\r\n") || len(s) > 512 {
				t.Fatalf("error is not one short line (%d bytes): %.600q", len(s), s)
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
