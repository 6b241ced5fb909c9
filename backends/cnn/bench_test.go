package cnn

import (
	"context"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
)

// BenchmarkJacobianProducts times one vector's products at digits.csv's
// train split (1198 images of 8x8, 10 classes, the default network: M =
// 17,258), on random images: what a Krylov step of lazy at scale costs.
func BenchmarkJacobianProducts(b *testing.B) {
	const n, classes = 1198, 10
	rng := rand.New(rand.NewPCG(3, 4))
	x := mat.NewDense(n, 64, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		r := x.RawRowView(i)
		for k := range r {
			r[k] = rng.NormFloat64()
		}
		y[i] = float64(i % classes)
	}
	md, err := NewModel(framework.ModelSpec{Task: framework.Multiclass, Classes: classes, Inputs: 64, Seed: 1,
		Options: map[string]string{"image": "8x8", "epochs": "2"}})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if err := md.Fit(ctx, x, y); err != nil {
		b.Fatal(err)
	}
	v := randomDense(rng, md.NumParams(), 1)
	u := randomDense(rng, n*classes, 1)
	b.Run("JacobianMul", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := md.JacobianMul(ctx, x, v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("JacobianTMul", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := md.JacobianTMul(ctx, x, u); err != nil {
				b.Fatal(err)
			}
		}
	})
}
