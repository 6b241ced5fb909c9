package experiment

import (
	"fmt"
	"strconv"

	"gonum.org/v1/plot/plotter"

	"github.com/lazyvi/lazyvi/backends/mlp"
	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/pipeline"
	"github.com/lazyvi/lazyvi/simulate"
)

func init() {
	register(&Experiment{
		Name:  "ntk-trace",
		Short: "Fig. trace_div: the trace of the NTK on the test rows against their number (Assumption kernel bound (b))",
		Claim: "the trace of the neural tangent kernel at the full model's parameters, on the test rows with X1 dropped, " +
			"grows linearly with the number of test rows (5 repetitions per size), as the kernel-bound assumption requires.",
		Reps: 5,
		run:  runNTKTrace,
	})
}

// ntkSizes are the data sizes ntk-trace trains at.
var ntkSizes = []int{250, 500, 1000, 2000, 4000}

func runNTKTrace(x *env) (*Result, error) {
	out := &Result{Header: []string{"rep", "n", "test_rows", "trace", "trace_per_row"}}
	perRow := make([][]float64, len(ntkSizes))
	var pts plotter.XYs
	for k, n := range ntkSizes {
		for rep := 0; rep < x.reps; rep++ {
			seed := x.seed + int64(rep)
			x.status(fmt.Sprintf("ntk-trace: n %d, repetition %d/%d", n, rep+1, x.reps))
			sim, err := simulate.Linear(n, timeErrorRho, seed)
			if err != nil {
				return nil, err
			}
			d := &dataio.Dataset{Source: sim.Setting, Names: sim.Names, X: sim.X}
			p, err := pipeline.Prepare(x.ctx, d, pipeline.Config{Backend: mlp.Backend{}, BackendName: "mlp", Options: map[string]string{"hidden": "50"}, Seed: seed})
			if err != nil {
				return nil, err
			}
			tr, err := ntkTrace(x, p)
			p.Close()
			if err != nil {
				return nil, err
			}
			rows, _ := p.XEval.Dims()
			perRow[k] = append(perRow[k], tr/float64(rows))
			pts = append(pts, plotter.XY{X: float64(rows), Y: tr})
			out.Rows = append(out.Rows, []string{strconv.Itoa(rep), strconv.Itoa(n), strconv.Itoa(rows), ftoa(tr), ftoa(tr / float64(rows))})
		}
	}
	// The least-squares line through the origin.
	var sxy, sxx, maxX float64
	for _, pt := range pts {
		sxy += pt.X * pt.Y
		sxx += pt.X * pt.X
		maxX = max(maxX, pt.X)
	}
	slope := sxy / sxx
	p := newPanel("trace of the NTK, X1 dropped", "test rows", "trace")
	if err := addScatter(p, []series{{label: "one repetition", pts: pts}}); err != nil {
		return nil, err
	}
	if err := addReference(p, fmt.Sprintf("%.3g x test rows", slope), plotter.XYs{{X: 0, Y: 0}, {X: maxX, Y: slope * maxX}}); err != nil {
		return nil, err
	}
	out.Plots = append(out.Plots, p)
	out.Notes = append(out.Notes, fmt.Sprintf("linear setting, rho %.1f, mlp width 50 at the full model's parameters, %d repetitions per size; trace per test row (mean, sd) by n:", timeErrorRho, x.reps))
	for k, n := range ntkSizes {
		m, sd := meanSD(perRow[k])
		out.Notes = append(out.Notes, fmt.Sprintf("  - n %d: %.3f (%.3f)", n, m, sd))
	}
	return out, nil
}

// ntkTrace is the trace of the NTK Phi Phi^T on p's evaluation rows with
// x1 dropped: the sum of the per-row squared gradient norms.
func ntkTrace(x *env, p *framework.Problem) (float64, error) {
	g, ok := framework.As[framework.Gradienter](p.Full)
	if !ok {
		return 0, fmt.Errorf("the backend has no gradients")
	}
	j, err := g.Jacobian(x.ctx, p.Drop(p.XEval, framework.Feature{Name: "x1", Columns: []int{0}}))
	if err != nil {
		return 0, err
	}
	tr := 0.0
	for _, v := range j.RawMatrix().Data {
		tr += v * v
	}
	return tr, nil
}
