package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteAnnounced: a file written is named on stderr, "replaced" when
// one was there.
func TestWriteAnnounced(t *testing.T) {
	var stderr bytes.Buffer
	a := &app{stderr: &stderr}
	path := filepath.Join(t.TempDir(), "r.json")
	if err := a.writeAnnounced(path, "a report", []byte("1")); err != nil {
		t.Fatal(err)
	}
	if err := a.writeAnnounced(path, "", []byte("2")); err != nil {
		t.Fatal(err)
	}
	want := "vi: wrote " + path + " (a report)\nvi: replaced " + path + "\n"
	if stderr.String() != want {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
	if b, _ := os.ReadFile(path); string(b) != "2" {
		t.Errorf("file holds %q", b)
	}
}

// TestMergeSaysWhatItWrote: vi merge --out names the file, the shards and
// the features on stderr.
func TestMergeSaysWhatItWrote(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "lin.csv"), linearCSV(60))
	common := append([]string{"--data", "lin.csv", "--estimators", "dropout", "--repeats", "1", "--format", "json"}, fastArgs...)
	for _, k := range []string{"1", "2"} {
		if _, stderr, code := vi(t, dir, append([]string{"estimate", "--shard", k + "/2", "--out", "s" + k + ".json"}, common...)...); code != 0 || !strings.Contains(stderr, "vi: wrote s"+k+".json\n") {
			t.Fatalf("shard %s: exit %d, stderr %q", k, code, stderr)
		}
	}
	_, stderr, code := vi(t, dir, "merge", "--out", "all.json", "s1.json", "s2.json")
	if code != 0 || stderr != "vi: wrote all.json (the report of 2 shards, 3 features)\n" {
		t.Errorf("merge: exit %d, stderr %q", code, stderr)
	}
}
