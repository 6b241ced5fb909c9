package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/dataio"
)

// TestRunIDFingerprint: the fingerprint is the SHA-256 of the command's
// name, the data's fingerprint, the model file's checksum in place of its
// name and the other flags given in lexical order, less those skipped.
func TestRunIDFingerprint(t *testing.T) {
	d := &dataio.Dataset{Source: "d.csv", Names: []string{"x", "y"}, X: mat.NewDense(2, 2, []float64{1, 2, 3, 4})}
	fs := flag.NewFlagSet("estimate", flag.ContinueOnError)
	fs.String("model", "", "")
	fs.Int("seed", 0, "")
	fs.Int("workers", 0, "")
	fs.Int("unused", 0, "")
	if err := fs.Parse([]string{"--workers", "2", "--seed", "3", "--model", "m.vimodel"}); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("the file"))
	id := &RunID{Command: "estimate", Data: d, Model: &dataio.SavedModel{FileSum: sum}, Flags: fs}
	head := "estimate\n" + dataio.DataFingerprint(d) + "\n" + fmt.Sprintf("--model=%x false\n", sum)
	for _, c := range []struct {
		skip []string
		text string
	}{
		{nil, head + "--seed=3\n--workers=2\n"},
		{[]string{"workers"}, head + "--seed=3\n"},
	} {
		want := sha256.Sum256([]byte(c.text))
		if got := id.Fingerprint(c.skip...); got != hex.EncodeToString(want[:]) {
			t.Errorf("skip %v: %s, want the SHA-256 of %q", c.skip, got, c.text)
		}
	}
}

// TestRunIDFingerprintNil: a RunID without data or flags hashes its
// command alone, without a panic, and two commands differ.
func TestRunIDFingerprintNil(t *testing.T) {
	a, b := (&RunID{Command: "estimate"}).Fingerprint(), (&RunID{Command: "shapley"}).Fingerprint()
	if a == "" || a == b {
		t.Errorf("fingerprints %q and %q", a, b)
	}
}
