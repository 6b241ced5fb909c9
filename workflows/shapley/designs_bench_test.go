package shapley

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/lazyvi/lazyvi/backends/linear"
	"github.com/lazyvi/lazyvi/estimators"
	"github.com/lazyvi/lazyvi/estimators/lazy"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/measures"
	"github.com/lazyvi/lazyvi/pipeline"
)

// BenchmarkGaussianDesigns runs Run with the default design and stopping
// on the Gaussian block designs (p = 8, 20, 50; n = 2000, half train, half
// evaluation; R²) with the linear backend and two reduced models, lazy with
// a fixed penalty of 1 (negligible against 1000 rows; with the penalty by
// cross-validation lazy's ridge solve fails as singular on some subsets of
// these designs) and retrain (an OLS refit, which converges to E[y | x_S]),
// over 5 seeds, and logs per design
// and estimator the subsets fitted, how many runs converged, the mean
// absolute error against the closed-form population values (with its SE
// over the seeds), the mean SE of the values and the wall time.
//
//	go test ./workflows/shapley -run '^$' -bench GaussianDesigns -benchtime 1x -v
func BenchmarkGaussianDesigns(b *testing.B) {
	const seeds = 5
	for range b.N {
		var sb strings.Builder
		fmt.Fprintf(&sb, "%-4s %-16s %8s %5s %16s %8s %8s\n", "p", "estimator", "subsets", "conv", "MAE (se)", "mean se", "seconds")
		for _, d := range []blockDesign{design8, design20, design50} {
			truth := d.truth()
			type agg struct{ subsets, conv, secs, se acc }
			stats := map[string]*agg{}
			maes := map[string]*acc{}
			var order []string
			for s := range seeds {
				cfg := pipeline.Config{Backend: linear.Backend{}, BackendName: "linear", Seed: int64(s + 1), TrainFrac: 0.5}
				rep, err := Run(context.Background(), d.dataset(2000, int64(s+1)), cfg, measures.R2(),
					[]framework.Estimator{lazy.Estimator{Lambda: 1}, estimators.Retrain{}}, RunOptions{Options: Options{Workers: 2}})
				if err != nil {
					b.Fatal(err)
				}
				p := d.p()
				for e, sum := range rep.Estimators {
					if stats[sum.Estimator] == nil {
						stats[sum.Estimator], maes[sum.Estimator] = &agg{}, &acc{}
						order = append(order, sum.Estimator)
					}
					st := stats[sum.Estimator]
					st.subsets.add(float64(sum.Subsets))
					st.secs.add(sum.Seconds)
					if sum.Converged {
						st.conv.add(1)
					} else {
						st.conv.add(0)
					}
					mae, se := 0.0, 0.0
					for j, r := range rep.Results[e*p : (e+1)*p] {
						mae += math.Abs(r.VI-truth[j]) / float64(p)
						se += r.SE / float64(p)
					}
					maes[sum.Estimator].add(mae)
					st.se.add(se)
				}
			}
			for _, name := range order {
				st := stats[name]
				fmt.Fprintf(&sb, "%-4d %-16s %8.0f %2.0f/%d %16s %8.4f %8.2f\n", d.p(), name, st.subsets.mean(), st.conv.s, seeds,
					fmt.Sprintf("%.4f (%.4f)", maes[name].mean(), maes[name].se()), st.se.mean(), st.secs.mean())
			}
		}
		b.Log("\n" + sb.String())
	}
}
