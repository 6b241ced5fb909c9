package experiment

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/lazyvi/lazyvi/framework"
)

// The registry holds the paper's nine experiments in the order of the
// list; an unknown name is a usage error.
func TestAllAndLookup(t *testing.T) {
	want := []string{"highdim", "corr", "time-error", "binary", "width", "init", "ntk-trace", "shapley", "roar-images"}
	all := All()
	if len(all) != len(want) {
		t.Fatalf("All: %d experiments, want %d", len(all), len(want))
	}
	for i, e := range all {
		if e.Name != want[i] || e.Short == "" || e.Claim == "" || e.Reps < 1 {
			t.Errorf("All()[%d] = %s (%q, reps %d), want %s with a short, a claim and the paper's repetitions", i, e.Name, e.Short, e.Reps, want[i])
		}
		if got, err := Lookup(e.Name); err != nil || got != e {
			t.Errorf("Lookup(%s) = %v, %v", e.Name, got, err)
		}
	}
	if _, err := Lookup("nope"); !errors.Is(err, framework.ErrUsage) {
		t.Errorf("Lookup(nope): %v, want a usage error", err)
	}
	e, _ := Lookup("corr")
	for _, reps := range []int{-1, MaxReps + 1, 1 << 62} {
		if _, err := e.Run(context.Background(), Options{Reps: reps}); !errors.Is(err, framework.ErrUsage) {
			t.Errorf("Run with Reps %d: %v, want a usage error", reps, err)
		}
	}
}

// An experiment writes its data, figure and markdown note: ntk-trace at
// one repetition (five small networks).
func TestWriteFiles(t *testing.T) {
	e, err := Lookup("ntk-trace")
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Run(context.Background(), Options{Reps: 1, Seed: 1, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := res.WriteFiles(dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "ntk-trace.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1+len(ntkSizes) || rows[0][0] != "rep" {
		t.Errorf("ntk-trace.csv: %d rows, header %v; want a header and %d rows", len(rows), rows[0], len(ntkSizes))
	}
	png, err := os.ReadFile(filepath.Join(dir, "ntk-trace.png"))
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Errorf("ntk-trace.png: not a PNG (%v)", err)
	}
	svg, err := os.ReadFile(filepath.Join(dir, "ntk-trace.svg"))
	if err != nil || !bytes.Contains(svg, []byte("<svg")) {
		t.Errorf("ntk-trace.svg: not an SVG (%v)", err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "ntk-trace.md"))
	if err != nil || !bytes.Contains(md, []byte("`vi experiment ntk-trace --reps 1 --seed 1`")) || !bytes.Contains(md, []byte("![ntk-trace](ntk-trace.png)")) {
		t.Errorf("ntk-trace.md lacks the command or the figure:\n%s", md)
	}
	if err := res.DrawFigure(&bytes.Buffer{}, "gif"); err == nil {
		t.Error("DrawFigure as gif: want an error")
	}
}

// time-error's note item names each number: the groups' errors together,
// then the seconds, then the coverage; retrain's only its coverage.
func TestTimeErrorNote(t *testing.T) {
	got := timeErrorNote("lazy", [][]float64{{0.01, -0.01}, {0.02}, {0.003, -0.003, 0.003}}, 0.094, 0.95)
	want := "  - lazy: |VI - VI_retrain| x1,x2 0.010, x3 0.020, x4..x6 0.003; 0.094 s per feature; coverage 0.95"
	if got != want {
		t.Errorf("note\n%s\nwant\n%s", got, want)
	}
	if got, want := timeErrorNote("retrain", nil, 0, 1), "  - retrain: coverage 1.00"; got != want {
		t.Errorf("note %q, want %q", got, want)
	}
}
