package dataio

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
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
		body := bytes.Replace(good[:len(good)-len("sha256 ")-65], []byte(`"format":1`), []byte(`"format":9`), 1)
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
		{"format", otherFormat(), "model file format 9; this lazyvi reads format 1"},
		{"tampered format", bytes.Replace(good, []byte(`"format":1`), []byte(`"format":9`), 1), "checksum"},
	} {
		_, err := ReadModel(bytes.NewReader(c.data), "m.vimodel")
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "m.vimodel: ") || !errors.Is(err, framework.ErrUsage) {
			t.Errorf("%s: err %v, want an input error naming the file with %q", c.name, err, c.want)
		}
	}
}
