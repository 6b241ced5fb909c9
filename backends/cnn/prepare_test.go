package cnn

import (
	"context"
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
)

// TestPredictPreparedBlocks checks PredictPrepared against Predict to the
// bit on inputs of more than productBlock rows, whose last block has fewer
// rows than a block of predictBlock would (Predict ran its passes in
// blocks of predictBlock rows, the memo's in productBlock), with a dense layer
// of more than 64 inputs (gonum's Gemm sums those in chunks of 64 when it
// runs in parallel, over all of them when the product is too small to,
// which depends on the block's rows).
func TestPredictPreparedBlocks(t *testing.T) {
	ctx := context.Background()
	for _, task := range []framework.Task{framework.Regression, framework.Binary, framework.Multiclass} {
		spec := framework.ModelSpec{Task: task, Inputs: 20, Seed: 11, Options: map[string]string{
			"image": "5x4", "filters": "4", "pool": "1", "hidden": "5", "epochs": "2"}}
		if task == framework.Multiclass {
			spec.Classes = 3
		}
		md, err := NewModel(spec)
		if err != nil {
			t.Fatal(err)
		}
		x, y := gradData(productBlock+60, task, 4)
		if err := md.Fit(ctx, x, y); err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{productBlock + 44, productBlock + 60, 2*productBlock + 30} {
			xs, _ := gradData(n, task, 5)
			t.Run(fmt.Sprintf("%v/n%d", task, n), func(t *testing.T) {
				want, err := md.Predict(ctx, xs)
				if err != nil {
					t.Fatal(err)
				}
				got, err := md.PredictPrepared(ctx, xs)
				if err != nil {
					t.Fatal(err)
				}
				if !mat.Equal(got, want) {
					var d mat.Dense
					d.Sub(got, want)
					t.Errorf("PredictPrepared differs from Predict (largest sum of a row's |differences|: %.3g)", mat.Norm(&d, math.Inf(1)))
				}
			})
		}
	}
}
