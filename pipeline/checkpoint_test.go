package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/measures"
	"github.com/lazyvi/lazyvi/pipeline"
)

// counting wraps an estimator and counts its reductions; every third
// feature has an infinite stat, which the checkpoint must keep.
type counting struct {
	shift
	calls *atomic.Int64
}

func (c counting) Reduce(ctx context.Context, p *framework.Problem, f framework.Feature) (framework.Reduced, error) {
	c.calls.Add(1)
	r, err := c.shift.Reduce(ctx, p, f)
	r.Stats = map[string]float64{"x": float64(f.Columns[0]) / 3}
	if f.Columns[0]%3 == 2 {
		r.Stats["x"] = math.Inf(1)
	}
	return r, err
}

// Summarize reports the stat as it came back.
func (counting) Summarize(stats []map[string]float64) []framework.Field {
	return []framework.Field{{Key: "x", Value: fmt.Sprint(stats[0]["x"])}}
}

func TestCheckpointResumes(t *testing.T) {
	ctx := context.Background()
	p, err := pipeline.Prepare(ctx, dataset(300, 3), pipeline.Config{Backend: meanBackend{}, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "run.partial")
	var calls atomic.Int64
	est := counting{shift{0.5}, &calls}
	run := func(fingerprint string) ([]inference.Result, int) {
		t.Helper()
		c, n, err := dataio.OpenCheckpoint(path, fingerprint)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		res, err := pipeline.Estimate(ctx, p, measures.MSE(), []framework.Estimator{est}, p.Features(), pipeline.EstimateOptions{InferOptions: inference.InferOptions{Inference: inference.Plain}, Workers: 2, Checkpoint: c})
		if err != nil {
			t.Fatal(err)
		}
		return res, n
	}
	first, n := run("A")
	if n != 0 || calls.Load() != 3 {
		t.Fatalf("fresh run: %d entries loaded, %d reductions; want 0 and 3", n, calls.Load())
	}
	again, n := run("A")
	if n != 3 || calls.Load() != 3 {
		t.Fatalf("resumed run: %d entries loaded, %d reductions in all; want 3 and 3", n, calls.Load())
	}
	for i := range first {
		a, b := first[i], again[i]
		if a.VI != b.VI || a.SE != b.SE || fmt.Sprint(a.Extra) != fmt.Sprint(b.Extra) || len(a.Extra) != 1 {
			t.Errorf("result %d: resumed %+v, want %+v", i, b, a)
		}
	}
	// A crash mid-line: the entries before it are kept.
	b, _ := os.ReadFile(path)
	if err := os.WriteFile(path, b[:len(b)-20], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, n = run("A"); n != 2 || calls.Load() != 4 {
		t.Errorf("after a cut line: %d entries loaded, %d reductions; want 2 and 4", n, calls.Load())
	}
	// Other data or settings: start afresh.
	if _, n = run("B"); n != 0 || calls.Load() != 7 {
		t.Errorf("other fingerprint: %d entries loaded, %d reductions; want 0 and 7", n, calls.Load())
	}
	c, _, err := dataio.OpenCheckpoint(path, "B")
	if err != nil {
		t.Fatal(err)
	}
	if r, _, ok := c.Load("no such key"); ok || r.Pred != nil {
		t.Error("Load of an unknown key succeeded")
	}
	if err := c.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("Remove left %s", path)
	}
}

// A reduction's Carry (a baseline's, for the features that start from it)
// comes back from the file bit for bit, and a reduction without one
// without one; Draws (permute's further permutations) come back too.
func TestCheckpointKeepsCarry(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.partial")
	carry := []float64{3, math.Pi, -1e-300, 0.1 + 0.2, math.MaxFloat64, math.SmallestNonzeroFloat64}
	c, _, err := dataio.OpenCheckpoint(path, "A")
	if err != nil {
		t.Fatal(err)
	}
	pred := mat.NewDense(2, 1, []float64{1, 2})
	if err := c.Save("base", framework.Reduced{Pred: pred, Stats: map[string]float64{"lambda": 7}, Carry: carry}, 1); err != nil {
		t.Fatal(err)
	}
	if err := c.Save("x1", framework.Reduced{Pred: pred}, 1); err != nil {
		t.Fatal(err)
	}
	draws := []*mat.Dense{mat.NewDense(2, 1, []float64{3, 4}), mat.NewDense(2, 1, []float64{5, math.Pi})}
	if err := c.Save("x2", framework.Reduced{Pred: pred, Draws: draws}, 1); err != nil {
		t.Fatal(err)
	}
	c.Close()
	c, n, err := dataio.OpenCheckpoint(path, "A")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if n != 3 {
		t.Fatalf("%d reductions kept, want 3", n)
	}
	r, _, ok := c.Load("base")
	if !ok || len(r.Carry) != len(carry) {
		t.Fatalf("baseline: loaded %v, carry %v", ok, r.Carry)
	}
	for i, v := range carry {
		if math.Float64bits(r.Carry[i]) != math.Float64bits(v) {
			t.Errorf("carry[%d] = %v, want %v", i, r.Carry[i], v)
		}
	}
	if r, _, ok := c.Load("x1"); !ok || r.Carry != nil || r.Draws != nil {
		t.Errorf("feature: loaded %v, carry %v, draws %v, want none", ok, r.Carry, r.Draws)
	}
	r, _, ok = c.Load("x2")
	if !ok || len(r.Draws) != 2 || !mat.Equal(r.Draws[0], draws[0]) || !mat.Equal(r.Draws[1], draws[1]) || !mat.Equal(r.Pred, pred) {
		t.Errorf("draws: loaded %v, %v", ok, r.Draws)
	}
}

// A file of another format version (an older vi's: version 2 had no
// Carry, and its baselines' features would be solved otherwise than a
// fresh run's) is not resumed from, whatever its fingerprint, and
// StaleVersion says which version it was; the file rewritten, the next
// open finds the current format.
func TestCheckpointOtherVersion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.partial")
	old := `{"lazyvi_checkpoint":2,"fingerprint":"A"}
{"key":"base","seconds":1,"stats":{"lambda":"7"},"rows":2,"cols":1,"pred":[1,2]}
`
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	c, n, err := dataio.OpenCheckpoint(path, "A")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, ok := c.Load("base"); n != 0 || ok || c.StaleVersion() != 2 {
		t.Errorf("version 2 file: %d entries kept (base loaded: %v), stale version %d; want 0, false, 2", n, ok, c.StaleVersion())
	}
	if err := c.Save("x1", framework.Reduced{Pred: mat.NewDense(2, 1, []float64{3, 4})}, 1); err != nil {
		t.Fatal(err)
	}
	c.Close()
	c, n, err = dataio.OpenCheckpoint(path, "A")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if n != 1 || c.StaleVersion() != 0 {
		t.Errorf("reopened: %d entries, stale version %d; want 1 and 0", n, c.StaleVersion())
	}
	// Not a checkpoint at all (no version): refused, and left as it is.
	other := filepath.Join(t.TempDir(), "other.partial")
	if err := os.WriteFile(other, []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := dataio.OpenCheckpoint(other, "A"); !errors.Is(err, framework.ErrUsage) || !strings.Contains(err.Error(), "is not a lazyvi checkpoint") {
		t.Errorf("a file of no checkpoint: err %v, want an input error", err)
	}
	if b, _ := os.ReadFile(other); string(b) != "hello\n" {
		t.Errorf("a file of no checkpoint: now %q", b)
	}
}
