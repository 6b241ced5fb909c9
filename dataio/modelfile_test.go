package dataio

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lazyvi/lazyvi/framework"
)

func savedExample() *SavedModel {
	return &SavedModel{
		Protocol: 3, Backend: "mlp", Options: map[string]string{"hidden": "50"}, Task: "regression",
		Target: "y", Features: []string{"a", "b"}, Seed: 7, CrossFit: 2, Data: "abc",
		Folds: []SavedFold{
			{Mean: []float64{1, 2}, SD: []float64{3, 4}, Params: []byte{1, 2, 3}},
			{Mean: []float64{5, 6}, SD: []float64{7, 8}, Params: []byte("lazyvi-model\nsha256 ")},
		},
	}
}

func TestModelFileRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteModel(&buf, savedExample()); err != nil {
		t.Fatal(err)
	}
	m, err := ReadModel(bytes.NewReader(buf.Bytes()), "m.vimodel")
	if err != nil {
		t.Fatal(err)
	}
	want := savedExample()
	if m.Format != ModelFileFormat || m.Seed != 7 || m.Backend != "mlp" || m.Options["hidden"] != "50" || len(m.Folds) != 2 ||
		!bytes.Equal(m.Folds[0].Params, want.Folds[0].Params) || !bytes.Equal(m.Folds[1].Params, want.Folds[1].Params) ||
		m.Folds[1].SD[1] != 8 {
		t.Fatalf("read back %+v", m)
	}
	if m.FileSum != sha256.Sum256(buf.Bytes()) {
		t.Errorf("FileSum %x, want the sha256 of the whole file %x", m.FileSum, sha256.Sum256(buf.Bytes()))
	}
	// The same model gives the same bytes.
	var again bytes.Buffer
	WriteModel(&again, m)
	if !bytes.Equal(again.Bytes(), buf.Bytes()) {
		t.Fatal("writing a read model again changed its bytes")
	}
}

func TestModelFileRefusals(t *testing.T) {
	var buf bytes.Buffer
	WriteModel(&buf, savedExample())
	good := buf.Bytes()
	flip := func(i int) []byte {
		b := bytes.Clone(good)
		b[i] ^= 1
		return b
	}
	// A file of another format version, with a valid checksum.
	otherFormat := func() []byte {
		body := bytes.Replace(good[:len(good)-len("sha256 ")-65], []byte(`"format":2`), []byte(`"format":9`), 1)
		sum := sha256.Sum256(body)
		return append(body, "sha256 "+hex.EncodeToString(sum[:])+"\n"...)
	}
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "not a lazyvi model file"},
		{"csv", []byte("a,b\n1,2\n"), "not a lazyvi model file"},
		{"truncated", good[:len(good)-10], "checksum"},
		{"tiny", good[:20], "truncated"},
		{"param bit", flip(len(good) - 70), "checksum"},
		{"header bit", flip(30), "checksum"},
		{"format", otherFormat(), "model file format 9; this lazyvi reads format 2"},
		{"tampered format", bytes.Replace(good, []byte(`"format":2`), []byte(`"format":9`), 1), "checksum"},
	} {
		_, err := ReadModel(bytes.NewReader(c.data), "m.vimodel")
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "m.vimodel: ") || !errors.Is(err, framework.ErrUsage) {
			t.Errorf("%s: err %v, want an input error naming the file with %q", c.name, err, c.want)
		}
	}
}

// TestModelFileRepetitions: a file of repeated cross-fits holds the folds
// of every repetition in turn; a count of models that does not fit the
// declared folds and repetitions is refused.
func TestModelFileRepetitions(t *testing.T) {
	m := savedExample()
	m.Repeats = 3
	for r := 1; r < 3; r++ {
		for _, f := range savedExample().Folds {
			f.Params = append(f.Params, byte(r))
			m.Folds = append(m.Folds, f)
		}
	}
	var buf bytes.Buffer
	if err := WriteModel(&buf, m); err != nil {
		t.Fatal(err)
	}
	got, err := ReadModel(bytes.NewReader(buf.Bytes()), "m.vimodel")
	if err != nil {
		t.Fatal(err)
	}
	if got.Repetitions() != 3 || got.PerRepeat() != 2 || len(got.Folds) != 6 || !bytes.Equal(got.Folds[5].Params, append([]byte("lazyvi-model\nsha256 "), 2)) {
		t.Fatalf("read back %d repetitions of %d models: %+v", got.Repetitions(), got.PerRepeat(), got.Folds)
	}
	for _, c := range []struct {
		name             string
		crossfit, repeat int
		folds            int
	}{
		{"a fold short", 2, 3, 5},
		{"a repetition more", 2, 2, 6},
		{"one split, two models", 0, 0, 2},
		{"negative repetitions", 2, -3, 6},
		{"negative folds", -2, 3, 6},
	} {
		bad := savedExample()
		bad.CrossFit, bad.Repeats = c.crossfit, c.repeat
		bad.Folds = m.Folds[:c.folds]
		var b bytes.Buffer
		if err := WriteModel(&b, bad); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadModel(&b, "m.vimodel"); err == nil || !strings.Contains(err.Error(), "m.vimodel: model file holds") || !errors.Is(err, framework.ErrUsage) {
			t.Errorf("%s: err %v", c.name, err)
		}
	}
}

// TestLoadModelReadsParamsWhenUsed: LoadModel leaves a regular file's
// parameters in it until a fold's State reads them, which then are the
// ones written; a file changed after it was read is refused when a fold
// is used, naming the file.
func TestLoadModelReadsParamsWhenUsed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.vimodel")
	var buf bytes.Buffer
	if err := WriteModel(&buf, savedExample()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := LoadModel(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	want := savedExample()
	for i := range m.Folds {
		if m.Folds[i].Params != nil {
			t.Fatalf("fold %d: parameters read with the header", i+1)
		}
		b, err := m.Folds[i].State()
		if err != nil || !bytes.Equal(b, want.Folds[i].Params) {
			t.Fatalf("fold %d: state %q, %v; want %q", i+1, b, err, want.Folds[i].Params)
		}
	}
	if m.FileSum != sha256.Sum256(buf.Bytes()) {
		t.Error("FileSum is not the whole file's")
	}
	// Written again from the file, the same bytes.
	var again bytes.Buffer
	if err := WriteModel(&again, m); err != nil || !bytes.Equal(again.Bytes(), buf.Bytes()) {
		t.Fatalf("a loaded model written again: %v, same bytes %v", err, bytes.Equal(again.Bytes(), buf.Bytes()))
	}
	changed := bytes.Clone(buf.Bytes())
	changed[len(changed)-modelSumLen-1] ^= 1 // the last fold's last byte
	if err := os.WriteFile(path, changed, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Folds[0].State(); err != nil {
		t.Errorf("an unchanged fold of a changed file: %v", err)
	}
	if _, err := m.Folds[1].State(); err == nil || !strings.Contains(err.Error(), path+": model file changed since it was read") || !errors.Is(err, framework.ErrUsage) {
		t.Errorf("a changed fold: err %v", err)
	}
	if err := os.WriteFile(path, buf.Bytes()[:40], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Folds[1].State(); err == nil || !strings.Contains(err.Error(), "model file changed since it was read (it is shorter)") {
		t.Errorf("a truncated file: err %v", err)
	}
}

// TestModelFileFoldSums: a header whose checksum of a fold's parameters
// is not theirs is refused, though the file's checksum holds.
func TestModelFileFoldSums(t *testing.T) {
	var buf bytes.Buffer
	WriteModel(&buf, savedExample())
	sum := sha256.Sum256([]byte{1, 2, 3})
	other := sha256.Sum256([]byte{1, 2, 4})
	body := bytes.Replace(buf.Bytes()[:buf.Len()-modelSumLen], []byte(hex.EncodeToString(sum[:])), []byte(hex.EncodeToString(other[:])), 1)
	if _, err := ReadModel(bytes.NewReader(withSum(body)), "m.vimodel"); err == nil || !strings.Contains(err.Error(), "checksum of model 1's parameters") {
		t.Errorf("err %v", err)
	}
}
