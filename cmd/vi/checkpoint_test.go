package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/backendplugin"
	"github.com/lazyvi/lazyvi/dataio"
)

// A run's fingerprints hash the --model file's content as read once by
// readModelFile, in the fingerprint's fixed format (the SHA-256 of the
// whole file and a false), so that checkpoints resume and shards merge.
// The file is removed before fingerprinting: reading it again would hash
// another text.
func TestFingerprintReadsModelOnce(t *testing.T) {
	d := &dataio.Dataset{Source: "d.csv", Names: []string{"x", "y"}, X: mat.NewDense(2, 2, []float64{1, 2, 3, 4})}
	var file bytes.Buffer
	err := dataio.WriteModel(&file, &dataio.SavedModel{
		Protocol: backendplugin.ProtocolVersion, Backend: "mlp", Task: "regression", Target: "y",
		Features: []string{"x"}, Seed: 3, TrainFrac: 0.8, Data: dataio.DataFingerprint(d),
		Folds: []dataio.SavedFold{{Mean: []float64{2}, SD: []float64{1}, Params: []byte{1, 2, 3}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "m.vimodel")
	if err := os.WriteFile(path, file.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := &Command{UsageLine: "estimate [flags]"}
	cmd.Flag.String("model", "", "")
	cmd.Flag.Int("seed", 0, "")
	cmd.Flag.Int("workers", 0, "")
	cmd.Flag.String("shard", "", "")
	if err := cmd.Flag.Parse([]string{"--workers", "2", "--seed", "3", "--shard", "1/2", "--model", path}); err != nil {
		t.Fatal(err)
	}
	m, err := readModelFile(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	id := newRunID(cmd, d, m)

	model := fmt.Sprintf("--model=%x false\n", sha256.Sum256(file.Bytes()))
	head := "estimate\n" + dataio.DataFingerprint(d) + "\n"
	for _, c := range []struct {
		name, got, text string
	}{
		// Flags in lexical order, without workers (and shard for merge).
		{"checkpoint", checkpointID(id), head + model + "--seed=3\n--shard=1/2\n"},
		{"merge", mergeID(id), head + model + "--seed=3\n"},
	} {
		sum := sha256.Sum256([]byte(c.text))
		if want := hex.EncodeToString(sum[:]); c.got != want {
			t.Errorf("%s fingerprint %s, want the sha256 of %q, %s", c.name, c.got, c.text, want)
		}
	}
}
