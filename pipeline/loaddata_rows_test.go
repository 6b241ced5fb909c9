package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lazyvi/lazyvi/dataio"
)

// prepareSplitAfterDrop prepares the CSV text csv with --split-column part
// and --missing drop.
func prepareSplitAfterDrop(t *testing.T, csv string) error {
	t.Helper()
	path := filepath.Join(t.TempDir(), "d.csv")
	if err := os.WriteFile(path, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, _, err := LoadData(context.Background(), path, "", "part", dataio.PrepareOptions{Missing: dataio.MissingDrop})
	return err
}

// A bad split label after --missing drop names the file's row, not its
// index among the rows kept: row 3 has a missing cell and is dropped, the
// bad label is on row 6.
func TestSplitColumnRowAfterDrop(t *testing.T) {
	err := prepareSplitAfterDrop(t, "x1,x2,part,y\n1,2,train,1\n1,,eval,2\n2,3,train,3\n3,4,eval,4\n4,5,tst,5\n5,6,train,6\n")
	if err == nil || !strings.Contains(err.Error(), "row 6, column \"part\"") {
		t.Errorf("error %v; want one naming row 6 of the file, column part", err)
	}
}

// Fold numbers that hold on the file's rows but not on the rows kept
// (fold 5 of 4 rows once two are dropped, on the file's row 6) are refused
// naming the file's row.
func TestSplitColumnFoldsAfterDrop(t *testing.T) {
	err := prepareSplitAfterDrop(t, "x1,part,y\n1,1,1\n,2,2\n2,3,3\n,4,4\n3,5,5\n4,6,6\n")
	if err == nil || !strings.Contains(err.Error(), "row 6, column \"part\"") {
		t.Errorf("error %v; want one naming row 6 of the file, column part", err)
	}
}
