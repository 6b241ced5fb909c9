package shapley

import (
	"context"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lazyvi/lazyvi/framework"
)

// BenchmarkStoppingStudy is the simulation behind the stopping rule (the
// table in docs/shapley.md): the sampler and solver of a sampled design on
// the R² games of the Gaussian block designs with p = 20 and 50, noiseless
// (the population values, no influence functions) and noisy (the population
// reduced models scored on n = 500 sampled evaluation rows, so the values
// carry the evaluation noise and influence SEs of a real estimate but no
// model error), each rule at the default cap. Per design, game and rule it
// logs over the repetitions: the subsets fitted, the share converged, the
// mean absolute error against the population values (with its Monte Carlo
// SE) and, for noisy games, that of exact enumeration of the same estimated
// game; the largest RMS sampling error over the values' range; and how
// often |psi - psi_exact| <= 1.96 se_sampling and |psi - truth| <= 1.96 se.
//
//	go test ./workflows/shapley -run '^$' -bench StoppingStudy -benchtime 1x -v
//
// LAZYVI_SHAPLEY_STUDY_REPS sets the repetitions (default 40).
func BenchmarkStoppingStudy(b *testing.B) {
	reps := 40
	if s := os.Getenv("LAZYVI_SHAPLEY_STUDY_REPS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil {
			b.Fatal(err)
		}
		reps = v
	}
	for range b.N {
		var sb strings.Builder
		fmt.Fprintf(&sb, "%-4s %-9s %-40s %7s %6s %15s %15s %8s %7s %7s %6s\n", "p", "game", "rule", "subsets", "conv", "MAE (se)", "MAE exact (se)", "rmse/rg", "cov_s", "cov", "s/rep")
		for _, d := range []blockDesign{design20, design50} {
			truth := d.truth()
			for _, noisy := range studyGames {
				for _, rule := range studyRules {
					st := studyCell(b, d, truth, noisy, rule, reps)
					game := "noiseless"
					if noisy {
						game = "noisy"
					}
					exact := "-"
					if noisy {
						exact = fmt.Sprintf("%.4f (%.4f)", st.maeExact.mean(), st.maeExact.se())
					}
					fmt.Fprintf(&sb, "%-4d %-9s %-40s %7.0f %6.2f %15s %15s %8.4f %7.3f %7.3f %6.2f\n", d.p(), game, rule,
						st.subsets.mean(), st.conv.mean(), fmt.Sprintf("%.4f (%.4f)", st.mae.mean(), st.mae.se()), exact,
						st.rmseRange, st.covS.mean(), st.cov.mean(), st.secs.mean())
				}
			}
		}
		b.Log("\n" + sb.String())
	}
}

type acc struct{ n, s, s2 float64 }

func (a *acc) add(v float64) { a.n++; a.s += v; a.s2 += v * v }
func (a *acc) mean() float64 { return a.s / a.n }
func (a *acc) se() float64 {
	m := a.mean()
	return math.Sqrt(math.Max(0, a.s2/a.n-m*m) / (a.n - 1))
}

type cell struct {
	subsets, conv, mae, maeExact, covS, cov, secs acc
	rmseRange                                     float64
}

func studyCell(b *testing.B, d blockDesign, truth []float64, noisy bool, rule Rule, reps int) cell {
	var c cell
	p := d.p()
	sq := make([]float64, p)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range truth {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	for r := range reps {
		g := newOracleGame(d, 500, int64(1000+r))
		ref := truth
		if noisy {
			ref = g.exact()
		}
		empty, full := g.score(nil), g.score(Subset(seq(p)))
		if !noisy {
			zero := make([]float64, len(g.y))
			empty = framework.Score{Value: 0, Influence: zero}
			full = framework.Score{Value: d.popR2(Subset(seq(p))), Influence: zero}
		}
		design, err := NewDesign(p, Stop{Rule: rule, MaxSubsets: studyCap}, false, int64(r+1))
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		o, err := converge(context.Background(), NewPlan(design), g.scorer(noisy), empty, full, true, nil)
		if err != nil {
			b.Fatal(err)
		}
		c.secs.add(time.Since(start).Seconds())
		c.subsets.add(float64(len(o.scores)))
		if o.converged {
			c.conv.add(1)
		} else {
			c.conv.add(0)
		}
		var mae, maeX float64
		var inS, in float64
		for j := range p {
			mae += math.Abs(o.fit.Psi[j]-truth[j]) / float64(p)
			maeX += math.Abs(ref[j]-truth[j]) / float64(p)
			e := o.fit.Psi[j] - ref[j]
			sq[j] += e * e / float64(reps)
			if math.Abs(e) <= 1.96*o.seS[j] {
				inS++
			}
			if math.Abs(o.fit.Psi[j]-truth[j]) <= 1.96*math.Hypot(o.seS[j], o.seIF[j]) {
				in++
			}
		}
		c.mae.add(mae)
		c.maeExact.add(maeX)
		c.covS.add(inS / float64(p))
		c.cov.add(in / float64(p))
	}
	for _, v := range sq {
		c.rmseRange = math.Max(c.rmseRange, math.Sqrt(v)/(hi-lo))
	}
	return c
}

// studyCap is the study's cap on subsets, above the default so that it
// measures what the rules need.
const studyCap = 16384

var (
	studyRules = []Rule{RuleInference, RuleRange, RuleTypical}
	studyGames = []bool{false, true}
)

func seq(p int) []int {
	out := make([]int, p)
	for j := range out {
		out[j] = j
	}
	return out
}
