package main

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/workflows/roar"
	"github.com/lazyvi/lazyvi/workflows/shapley"
)

// TestNonFiniteReportsAreErrors: a Shapley or ROAR report with a NaN or
// infinite number is an error naming where it is (exit code 1), not a
// report.
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
}
