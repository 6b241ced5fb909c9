package lazy

import (
	"context"
	"sync"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/backends/mlp"
	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/pipeline"
	"github.com/lazyvi/lazyvi/simulate"
)

// The stages of one lazy feature at the paper's two sizes (the same cases
// as BenchmarkHighDimPerFeature and BenchmarkLinearPerFeature, feature x1):
//
//	go test -run X -bench 'Stage' ./estimators/lazy
//
// Flops of each stage (n1 = 667 or 3333 train rows, M = 5101 or 401
// parameters, three folds):
//   - setup, highdim (dual): the structured kernel K = sum over layers of
//     (Delta Delta^T) o (A A^T + 1): one forward/backward pass (n1 M
//     multiply-adds) and the upper triangles of Grams of inner dimensions
//     p = 100, 50 (first layer), 50 and 1 (output layer), n1^2 (p + 2 width
//     + 1) / 2 = 45 M multiply-adds = 0.09 GFLOP.
//   - setup, linear (primal): the Jacobian (n1 x M, no flops to speak of)
//     and G = Phi^T Phi as three fold blocks by symmetric rank-k updates,
//     n1 M^2 / 2 = 268 M multiply-adds = 0.54 GFLOP counted dense (ReLU
//     zeros in Phi are skipped, so fewer are done).
//   - search: per fold a Lanczos basis of k steps (2 d^2 + 2-4 k d flops a
//     step, d = 444 or 401; k up to ~55 or ~90) and per candidate penalty
//     (~10) and fold a Phi^T a (dual: 2 n_T M ~ 4.5 MFLOP) and a forward
//     pass on the held-out rows (2 n_H M ~ 2.3 or 0.9 MFLOP): ~0.1-0.3
//     GFLOP.
//
// The setup benchmark reports GFLOP/s on the dense count above; compare it
// with BenchmarkGramMul and BenchmarkGramSyrk in internal/linalg (a plain
// product of the same shape on the same machine).

type stageCase struct {
	setting string
	n       int
	rho     float64

	once   sync.Once
	g      framework.Gradienter
	x      *mat.Dense
	e      []float64
	t      []float64
	bounds []int
	err    error
}

var (
	stageHighDim = &stageCase{setting: "highdim", n: 1000, rho: 0.5}
	stageLinear  = &stageCase{setting: "linear", n: 5000, rho: 0.9}
)

func (c *stageCase) get(b *testing.B) *stageCase {
	c.once.Do(func() {
		sim, err := simulate.Generate(c.setting, c.n, c.rho, 1)
		if err != nil {
			c.err = err
			return
		}
		d := &dataio.Dataset{Source: c.setting, Names: sim.Names, X: sim.X}
		p, err := pipeline.Prepare(context.Background(), d, pipeline.Config{Backend: mlp.Backend{}, BackendName: "mlp", Seed: 1})
		if err != nil {
			c.err = err
			return
		}
		c.g = p.Full.(framework.Gradienter)
		f := p.Features()[0]
		dropped := p.Drop(p.XTrain, f)
		n1, _ := dropped.Dims()
		var order []int
		for _, fold := range foldsOf(n1, DefaultFolds, p.Seed) {
			c.bounds = append(c.bounds, len(order))
			order = append(order, fold...)
		}
		c.bounds = append(c.bounds, n1)
		c.x = rowsOf(dropped, order)
		c.t = make([]float64, n1)
		for i, r := range order {
			c.t[i] = p.YTrain[r]
		}
		base, err := c.g.Predict(context.Background(), c.x)
		if err != nil {
			c.err = err
			return
		}
		c.e = make([]float64, n1)
		floats.SubTo(c.e, c.t, base.RawMatrix().Data)
	})
	if c.err != nil {
		b.Fatal(c.err)
	}
	return c
}

func BenchmarkStageSetup(b *testing.B) {
	for _, c := range []*stageCase{stageHighDim, stageLinear} {
		b.Run(c.setting, func(b *testing.B) {
			c := c.get(b)
			n1, _ := c.x.Dims()
			m := c.g.NumParams()
			var flops float64
			if n1 <= m {
				_, p := c.x.Dims()
				flops = float64(n1) * float64(n1) * float64(p+2*50+1) // width 50, the default
			} else {
				flops = float64(n1) * float64(m) * float64(m)
			}
			b.ResetTimer()
			for b.Loop() {
				if _, err := testProblem(Estimator{}, c.g, c.x, nil, c.e, 0).newRidge(context.Background(), c.bounds, false); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

func BenchmarkStageSearch(b *testing.B) {
	for _, c := range []*stageCase{stageHighDim, stageLinear} {
		b.Run(c.setting, func(b *testing.B) {
			c := c.get(b)
			rp, err := testProblem(Estimator{}, c.g, c.x, nil, c.e, 0).newRidge(context.Background(), c.bounds, false)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				if _, err := testProblem(Estimator{}, c.g, c.x, c.t, c.e, 0).chooseAlpha(context.Background(), rp, c.bounds, searchTol, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
