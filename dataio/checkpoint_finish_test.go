package dataio

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
)

// TestResumable: a failure that running again can get past is resumable;
// bad input, bad settings and a non-finite result are not.
func TestResumable(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{errors.New("backend mlp: fit: plugin exited"), true},
		{errors.New("interrupted"), true},
		{framework.Usagef("split inference needs at least 4 evaluation rows"), false},
		{fmt.Errorf("estimator lazy, feature x: %w", framework.ErrNonFinite), false},
		{&InputError{File: "d.csv", Msg: "bad"}, false},
	} {
		if got := resumable(tc.err); got != tc.want {
			t.Errorf("resumable(%v) = %t, want %t", tc.err, got, tc.want)
		}
	}
}

// TestCheckpointKeptOnlyWhenResumable: after a failure that a resume gets
// past the checkpoint is kept and the error says so; after one that the
// same command meets again, and after a success, it is removed and
// nothing is advised. A nil checkpoint passes the error on.
func TestCheckpointKeptOnlyWhenResumable(t *testing.T) {
	for _, tc := range []struct {
		err  error
		keep bool
	}{
		{errors.New("interrupted"), true},
		{fmt.Errorf("estimator lazy, feature x: %w", framework.ErrNonFinite), false},
		{framework.Usagef("measure auc: the 10 responses are all 0"), false},
		{nil, false},
	} {
		path := filepath.Join(t.TempDir(), "o.json.partial")
		c, _, err := OpenCheckpoint(path, "fp")
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Save("k", framework.Reduced{Pred: mat.NewDense(1, 1, []float64{1})}, 1); err != nil {
			t.Fatal(err)
		}
		got := c.Finish(tc.err)
		_, statErr := os.Stat(path)
		advised := got != nil && strings.Contains(got.Error(), "resumes")
		if kept := statErr == nil; kept != tc.keep || advised != tc.keep || !errors.Is(got, tc.err) {
			t.Errorf("%v: kept %t, advised %t (%v); want %t", tc.err, kept, advised, got, tc.keep)
		}
	}
	var none *FileCheckpoint
	if err := errors.New("x"); none.Finish(err) != err {
		t.Error("a nil checkpoint changed the error")
	}
}
