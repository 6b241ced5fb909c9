package main

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/workflows/roar"
	"github.com/lazyvi/lazyvi/workflows/shapley"
)

// TestNonFiniteReportsAreErrors: a Shapley or ROAR report with a NaN or
// infinite number is an error naming where it is (exit code 1), not a
// report, and no resume is offered for it.
func TestNonFiniteReportsAreErrors(t *testing.T) {
	shp := &shapley.Report{Results: []shapley.Result{{Result: inference.Result{Feature: "x1", Estimator: "shapley-lazy", VI: 1, SE: 0.1}}, {Result: inference.Result{Feature: "x2", Estimator: "shapley-lazy", VI: 1, SE: math.Inf(1)}}}}
	err := shapleyFinite(shp)
	if !errors.Is(err, framework.ErrNonFinite) || errors.Is(err, framework.ErrUsage) || !strings.Contains(err.Error(), "estimator shapley-lazy, feature x2: the standard error is +Inf") {
		t.Errorf("shapley: got %v", err)
	}
	shp.Results[1].SE = 0.2
	shp.Empty.Score = math.NaN()
	if err := shapleyFinite(shp); !errors.Is(err, framework.ErrNonFinite) || !strings.Contains(err.Error(), "intercept-only model's score is NaN") {
		t.Errorf("shapley, empty score: got %v", err)
	}
	shp.Empty.Score = -3
	if err := shapleyFinite(shp); err != nil {
		t.Errorf("finite shapley report: %v", err)
	}

	rr := &roar.Report{Results: []roar.Result{{Ordering: "random", Fraction: 0.5, Estimator: "retrain", Score: math.Inf(-1)}}}
	if err := roarFinite(rr); !errors.Is(err, framework.ErrNonFinite) || !strings.Contains(err.Error(), "estimator retrain, ordering random, fraction 0.5: the score is -Inf") {
		t.Errorf("roar: got %v", err)
	}
	rr.Results[0].Score = 1
	if err := roarFinite(rr); err != nil {
		t.Errorf("finite roar report: %v", err)
	}

	for _, tc := range []struct {
		err  error
		want bool
	}{
		{errors.New("backend mlp: fit: plugin exited"), true},
		{errors.New("interrupted"), true},
		{framework.Usagef("split inference needs at least 4 evaluation rows"), false},
		{fmt.Errorf("estimator lazy, feature x: %w", framework.ErrNonFinite), false},
		{&dataio.InputError{File: "d.csv", Msg: "bad"}, false},
	} {
		if got := resumable(tc.err); got != tc.want {
			t.Errorf("resumable(%v) = %t, want %t", tc.err, got, tc.want)
		}
	}
}

// TestCheckpointKeptOnlyWhenResumable: after a failure that a resume gets
// past the OUT.partial is kept and the error says so; after one that the
// same command meets again it is removed and nothing is advised.
func TestCheckpointKeptOnlyWhenResumable(t *testing.T) {
	for _, tc := range []struct {
		err  error
		keep bool
	}{
		{errors.New("interrupted"), true},
		{fmt.Errorf("estimator lazy, feature x: %w", framework.ErrNonFinite), false},
		{framework.Usagef("measure auc: the 10 responses are all 0"), false},
	} {
		out := filepath.Join(t.TempDir(), "o.json")
		c, _, err := dataio.OpenCheckpoint(out+".partial", "fp")
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Save("k", framework.Reduced{Pred: mat.NewDense(1, 1, []float64{1})}, 1); err != nil {
			t.Fatal(err)
		}
		got := finishCheckpoint(c, out, tc.err)
		_, statErr := os.Stat(out + ".partial")
		advised := strings.Contains(got.Error(), "resumes")
		if kept := statErr == nil; kept != tc.keep || advised != tc.keep || !errors.Is(got, tc.err) {
			t.Errorf("%v: kept %t, advised %t (%v); want %t", tc.err, kept, advised, got, tc.keep)
		}
	}
}
