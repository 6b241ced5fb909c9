package dataio

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadModelFile: a model file of this protocol version reads; one of
// another version, standard input and a missing file are input errors
// that say what to do.
func TestReadModelFile(t *testing.T) {
	ctx := context.Background()
	m := savedExample()
	var buf bytes.Buffer
	if err := WriteModel(&buf, m); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "m.vimodel")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadModelFile(ctx, path, m.Protocol); err != nil || got.Backend != m.Backend {
		t.Fatalf("same protocol: %v", err)
	}
	for _, tc := range []struct {
		path     string
		protocol int
		want     string
	}{
		{path, m.Protocol + 1, "train it again with this vi"},
		{"-", m.Protocol, "not from standard input"},
		{path + ".none", m.Protocol, "no such model file"},
	} {
		_, err := ReadModelFile(ctx, tc.path, tc.protocol)
		var ie *InputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s, protocol %d: %v, want an input error %q", tc.path, tc.protocol, err, tc.want)
		}
	}
}

// TestModels: the description of a file's models by folds and
// repetitions.
func TestModels(t *testing.T) {
	for _, tc := range []struct {
		crossfit, repeats int
		want              string
	}{
		{0, 1, "1 model"},
		{3, 1, "3 models (one per fold)"},
		{0, 4, "4 models (one per repetition)"},
		{3, 3, "9 models: 3 repetitions of 3 folds"},
	} {
		m := &SavedModel{CrossFit: tc.crossfit, Repeats: tc.repeats}
		if got := m.Models(); got != tc.want {
			t.Errorf("crossfit %d, repeats %d: %q, want %q", tc.crossfit, tc.repeats, got, tc.want)
		}
	}
}
