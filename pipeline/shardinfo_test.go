package pipeline

import (
	"encoding/json"
	"testing"
)

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
