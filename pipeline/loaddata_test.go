package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/lazyvi/lazyvi/dataio"
)

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestLoadData: evaluation rows from a second file are joined after the
// training rows with label 1; a split column becomes the partition and is
// left out of the features; the response is the last column besides it.
func TestLoadData(t *testing.T) {
	ctx := context.Background()
	train := writeFile(t, "train.csv", "a,b,y\n1,2,3\n4,5,6\n7,8,9\n")
	eval := writeFile(t, "eval.csv", "a,b,y\n1,1,1\n2,2,2\n")
	d, part, target, err := LoadData(ctx, train, eval, "", dataio.PrepareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := d.X.Dims(); r != 5 || target != "y" || !slices.Equal(part, []int{0, 0, 0, 1, 1}) {
		t.Errorf("eval file: %d rows, target %q, partition %v; want 5 rows, y, [0 0 0 1 1]", r, target, part)
	}

	split := writeFile(t, "split.csv", "a,y,fold\n1,2,1\n3,4,2\n5,6,1\n7,8,2\n")
	d, part, target, err = LoadData(ctx, split, "", "fold", dataio.PrepareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.Names, []string{"a", "y"}) || target != "y" || !slices.Equal(part, []int{1, 2, 1, 2}) || Folds(part) != 2 {
		t.Errorf("split column: names %v, target %q, partition %v; want [a y], y, [1 2 1 2]", d.Names, target, part)
	}

	only := writeFile(t, "only.csv", "fold\ntrain\neval\n")
	if _, _, _, err := LoadData(ctx, only, "", "fold", dataio.PrepareOptions{}); err == nil {
		t.Error("a file with the split column alone loaded")
	}
	d, part, _, err = LoadData(ctx, train, "", "", dataio.PrepareOptions{})
	if err != nil || part != nil || Folds(part) != 0 {
		t.Errorf("no evaluation rows: partition %v, err %v; want nil", part, err)
	}
}
