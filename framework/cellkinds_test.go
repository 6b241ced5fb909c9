package framework

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestCellKinds: ReadCSV's errors say what kind of cell was not a
// number, for a tool to say what to do: a word is text, an empty cell and
// NA a missing value, a malformed number neither.
func TestCellKinds(t *testing.T) {
	for _, tc := range []struct {
		cell          string
		text, missing bool
	}{
		{"north", true, false},
		{"Süd", true, false},
		{"", false, true},
		{"NA", false, true},
		{"1,5", false, false},
		{"0x1p-2", false, false},
		{"1.2.3", false, false},
		{"NaN", false, false},
	} {
		_, err := ReadCSV(strings.NewReader("a,b\n1,"+csvCell(tc.cell)+"\n"), "d.csv")
		if err == nil {
			t.Fatalf("%q: no error", tc.cell)
		}
		var ie *InputError
		if !errors.As(err, &ie) || ie.Column != "b" || ie.Row != 2 {
			t.Errorf("%q: %v, want an InputError at row 2, column b", tc.cell, err)
		}
		if got := errors.Is(err, ErrText); got != tc.text {
			t.Errorf("%q: errors.Is(ErrText) = %v (%v)", tc.cell, got, err)
		}
		if got := errors.Is(err, ErrMissingValue); got != tc.missing {
			t.Errorf("%q: errors.Is(ErrMissingValue) = %v (%v)", tc.cell, got, err)
		}
		if !errors.Is(err, ErrUsage) {
			t.Errorf("%q: not a usage error: %v", tc.cell, err)
		}
	}
}

func csvCell(s string) string {
	if strings.Contains(s, ",") {
		return `"` + s + `"`
	}
	return s
}

// TestShardInfoJSON: a shard's index is 1-based in JSON, as --shard K/N
// gives it, and reads back as it was; an index outside 1..count reads as
// one outside Shard.Index's range, which merging refuses
// (TestMergeReportsShardRange).
func TestShardInfoJSON(t *testing.T) {
	in := ShardInfo{Shard: Shard{Index: 0, Count: 2}, Features: []string{"x1", "x2"}, Run: "abc"}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"index":1,"count":2,"features":["x1","x2"],"run":"abc"}`; string(b) != want {
		t.Errorf("JSON %s, want %s", b, want)
	}
	var back ShardInfo
	if err := json.Unmarshal(b, &back); err != nil || back.Shard != in.Shard || back.Run != in.Run || len(back.Features) != 2 {
		t.Errorf("read back %+v, %v; want %+v", back, err, in)
	}
	if err := json.Unmarshal([]byte(`{"index":0,"count":2}`), &back); err != nil || back.Index != -1 {
		t.Errorf(`"index": 0 reads as %+v, %v; want Index -1`, back, err)
	}
}
