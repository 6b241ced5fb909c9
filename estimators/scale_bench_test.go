package estimators

import (
	"context"
	"math"
	"sync"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/backends/mlp"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/simulate"
)

// The stages of lazy at scale on the high-dimensional setting at n 10000
// with a (200, 100) network (n1 = 6667 train rows, M = 40401 parameters;
// the network trained for 20 epochs only, which changes the numbers little
// and the setup time much), feature x1:
//
//	go test -run X -bench 'Scale' ./estimators
//
// Flops:
//   - product: one Phi v and one Phi^T u on all train rows through the
//     memoised signals, 2 n1 M each: 1.08 GFLOP (counted, as the solver
//     counts them).
//   - search: the penalty's dense cross-validation on a subsample of
//     subsampleRows rows (kernel ns^2 (p + 2 (200 + 100) + 1) / 2 plus the
//     folds' Lanczos steps and shifted predictions).
//   - solve: the matrix-free Krylov solve at the chosen penalty, steps x
//     (4 n1 M + reorthogonalisation), reported as GFLOP/s on that count.
var scaleCase = scaleProblem{setting: "highdim", n: 10000, rho: 0.5}

// scaleLinear is the linear setting at n 20000 (p 6, M 21601), the size
// where retrain converges in a few epochs.
var scaleLinear = scaleProblem{setting: "linear", n: 20000, rho: 0.9}

type scaleProblem struct {
	setting string
	n       int
	rho     float64
	p       *framework.Problem
	once    sync.Once
	g       framework.Gradienter
	x       *mat.Dense
	t, e    []float64
	seed    int64
	err     error
}

func scaleGet(b *testing.B) { scaleCase.get(b) }

func (scaleCase *scaleProblem) get(b *testing.B) {
	scaleCase.once.Do(func() {
		sim, err := simulate.Generate(scaleCase.setting, scaleCase.n, scaleCase.rho, 1)
		if err != nil {
			scaleCase.err = err
			return
		}
		d := &framework.Dataset{Source: scaleCase.setting, Names: sim.Names, X: sim.X}
		p, err := framework.Prepare(context.Background(), d, framework.Config{Backend: mlp.Backend{}, BackendName: "mlp", Seed: 1,
			Options: map[string]string{"hidden": "200,100", "epochs": "20"}})
		if err != nil {
			scaleCase.err = err
			return
		}
		scaleCase.p = p
		scaleCase.g = p.Full.(framework.Gradienter)
		scaleCase.x = p.Drop(p.XTrain, p.Features()[0])
		scaleCase.t = p.YTrain
		base, err := scaleCase.g.Predict(context.Background(), scaleCase.x)
		if err != nil {
			scaleCase.err = err
			return
		}
		scaleCase.e = make([]float64, len(p.YTrain))
		floats.SubTo(scaleCase.e, p.YTrain, base.RawMatrix().Data)
		scaleCase.seed = p.Seed
	})
	if scaleCase.err != nil {
		b.Fatal(scaleCase.err)
	}
}

func BenchmarkScaleProduct(b *testing.B) {
	scaleGet(b)
	c := &scaleCase
	n1, m := len(c.e), c.g.NumParams()
	jm, _ := framework.AsJacobianMultiplier(c.g)
	op := &jacobianOp{ctx: context.Background(), jm: jm, x: c.x, n: n1, m: m, dual: true}
	dst := make([]float64, n1)
	b.ResetTimer()
	for b.Loop() {
		if err := op.mulVec(dst, c.e); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(4*float64(n1)*float64(m)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

func BenchmarkScaleSearch(b *testing.B) {
	scaleGet(b)
	c := &scaleCase
	var alpha float64
	for b.Loop() {
		var err error
		if alpha, err = (Lazy{}).subsampleAlpha(context.Background(), c.g, c.x, c.t, c.e, 1, c.seed, map[string]float64{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(math.Log10(alpha), "log10-alpha")
}

func BenchmarkScaleSolve(b *testing.B) {
	scaleGet(b)
	c := &scaleCase
	alpha, err := (Lazy{}).subsampleAlpha(context.Background(), c.g, c.x, c.t, c.e, 1, c.seed, map[string]float64{})
	if err != nil || math.IsInf(alpha, 1) {
		b.Fatalf("alpha %v, %v", alpha, err)
	}
	var flops float64
	var steps int
	b.ResetTimer()
	for b.Loop() {
		var err error
		if _, steps, flops, err = matrixFreeSolve(context.Background(), c.g, c.x, c.e, alpha, DefaultMemory); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(steps), "steps")
	b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// BenchmarkScaleReduce is one whole feature (x1) at scale, both settings.
func BenchmarkScaleReduce(b *testing.B) {
	for _, c := range []*scaleProblem{&scaleCase, &scaleLinear} {
		b.Run(c.setting, func(b *testing.B) {
			c.get(b)
			f := c.p.Features()[0]
			b.ResetTimer()
			for b.Loop() {
				if _, err := (Lazy{}).Reduce(context.Background(), c.p, f); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
