// Package roar evaluates importance orderings by ROAR, RemOve And Retrain
// (Hooker, Erhan, Kindermans, Kim 2019; section 6.2 of the LazyVI paper):
// for each fraction t of the features, the first round(t p) features of an
// ordering are removed (replaced by their train mean, as Problem.Drop does;
// with Options.Groups, the units are groups of columns, patches of an
// image's pixels say, and the first round(t g) groups are removed)
// and the reduced model's measure is reported under each estimator of the
// reduced model: retrain (the ROAR reference), dropout (no retraining) and
// lazy-es or lazy (cheap substitutes for retraining).
//
// Orderings: "grad", the features by decreasing mean absolute input
// gradient of the full model over the train split (central differences of
// Predict, step GradStep in standardised units, summed over the outputs for
// multiclass; a group's is the sum over its columns), and "random", a
// permutation seeded by the run's seed.
package roar

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/pipeline"
)

// DefaultFractions are the paper's fractions of removed features.
var DefaultFractions = []float64{0.1, 0.25, 0.5, 0.75, 0.9, 0.99}

// Orderings are the names Order knows.
var Orderings = []string{"grad", "random"}

// GradStep is the central-difference step of the grad ordering, in
// standardised units.
const GradStep = 1e-3

// Result is one reduced model's score: the measure's larger-is-better
// Value on the evaluation split (accuracy as it is; -MSE for mse, as
// full.score in vi estimate), for a loss measure the loss itself (-Score),
// its standard error sd(IF)/sqrt(n2), and the estimator's wall time.
type Result struct {
	Ordering  string   `json:"ordering"`
	Fraction  float64  `json:"fraction"`
	Removed   int      `json:"removed"`         // features (or groups) removed
	Columns   int      `json:"removed_columns"` // columns removed
	Estimator string   `json:"estimator"`
	Score     float64  `json:"score"`
	Loss      *float64 `json:"loss,omitempty"`
	SE        float64  `json:"se"`
	Seconds   float64  `json:"seconds"`
}

// Report is a ROAR run; its JSON is vi roar's --format json.
type Report struct {
	Measure  string `json:"measure"`
	Backend  string `json:"backend"`
	Task     string `json:"task"`
	NTrain   int    `json:"n_train"`
	NEval    int    `json:"n_eval"`
	Features int    `json:"features"`
	// Groups is the number of groups the orderings order (Options.Groups),
	// 0 when they order the features.
	Groups int     `json:"groups,omitempty"`
	Seed   int64   `json:"seed"`
	Level  float64 `json:"level"`
	// Full is the full model's score (nothing removed).
	Full struct {
		Score float64  `json:"score"`
		Loss  *float64 `json:"loss,omitempty"` // a loss measure's loss, -Score
		SE    float64  `json:"se"`
	} `json:"full"`
	// Orders holds each ordering's feature (or group) names, first removed
	// first.
	Orders  map[string][]string `json:"orders"`
	Results []Result            `json:"results"`
	// Seconds is each estimator's total wall time over the curve(s).
	Seconds map[string]float64 `json:"seconds"`
}

// Options tune Run.
type Options struct {
	Orderings []string  // default: grad
	Fractions []float64 // default: DefaultFractions
	Workers   int       // concurrent reductions; 0: all CPUs
	Level     float64   // for the report (plots draw level intervals); 0: inference.DefaultLevel
	// Groups are the units the orderings order and remove, each a group
	// of columns (dataio.ResolveFeatures); nil: every feature alone.
	Groups   []framework.Feature
	Progress func(done, total int)
}

// Run computes the ROAR curves on p, whose full model is trained.
func Run(ctx context.Context, p *framework.Problem, m framework.Measure, ests []framework.Estimator, opt Options) (*Report, error) {
	if !m.Supports(p.Task) {
		return nil, framework.Usagef("measure %q does not fit a %s response", m.Name(), p.Task)
	}
	orderings := opt.Orderings
	if len(orderings) == 0 {
		orderings = []string{"grad"}
	}
	fractions := opt.Fractions
	if len(fractions) == 0 {
		fractions = DefaultFractions
	}
	for _, t := range fractions {
		if !(t > 0 && t <= 1) {
			return nil, &framework.FieldError{Field: "roar.Options.Fractions", Msg: fmt.Sprintf("has %g, not in (0, 1]", t)}
		}
	}
	if len(ests) == 0 {
		return nil, framework.Usagef("roar: no estimators")
	}
	n1, np := p.XTrain.Dims()
	units := opt.Groups
	if units == nil {
		units = p.Features()
	}
	if len(units) == 0 {
		return nil, framework.Usagef("roar: no features to remove")
	}
	for _, u := range units {
		if len(u.Columns) == 0 {
			return nil, framework.Usagef("roar: group %q has no columns", u.Name)
		}
		for _, j := range u.Columns {
			if j < 0 || j >= np {
				return nil, framework.Usagef("roar: group %q has column %d, not one of the %d features", u.Name, j, np)
			}
		}
	}
	n2, _ := p.XEval.Dims()
	level := opt.Level
	if level == 0 {
		level = inference.DefaultLevel
	}
	rep := &Report{Measure: m.Name(), Backend: p.BackendName, Task: p.Task.String(), NTrain: n1, NEval: n2,
		Features: np, Seed: p.Seed, Level: level, Orders: map[string][]string{}, Seconds: map[string]float64{}}
	full, err := m.Evaluate(p.YEval, p.FullEval)
	if err != nil {
		return nil, fmt.Errorf("measure %s of the full model: %w", m.Name(), err)
	}
	rep.Full.Score, rep.Full.Loss, rep.Full.SE = full.Value, framework.LossOf(m, full.Value), seOf(full.Influence)
	if opt.Groups != nil {
		rep.Groups = len(units)
	}

	type point struct {
		ordering string
		fraction float64
		removed  int
		columns  int
	}
	var feats []framework.Feature
	var points []point
	for _, o := range orderings {
		order, err := OrderGroups(ctx, p, o, units)
		if err != nil {
			return nil, err
		}
		names := make([]string, len(order))
		for i, u := range order {
			names[i] = units[u].Name
		}
		rep.Orders[o] = names
		g := len(units)
		for _, t := range fractions {
			k := min(max(int(math.Round(t*float64(g))), 1), g)
			cols := columnsOf(units, order[:k])
			feats = append(feats, framework.Feature{Name: fmt.Sprintf("%s@%g", o, t), Columns: cols})
			points = append(points, point{o, t, k, len(cols)})
		}
	}
	red, err := pipeline.Reduce(ctx, []*framework.Problem{p}, ests, feats, pipeline.ReduceOptions{Workers: opt.Workers, Progress: opt.Progress})
	if err != nil {
		return nil, err
	}
	for f, pt := range points {
		for e, est := range ests {
			s, err := m.Evaluate(p.YEval, red.Reduced[0][e][f].Pred)
			if err != nil {
				return nil, fmt.Errorf("estimator %s, %s fraction %g: measure %s: %w", est.Name(), pt.ordering, pt.fraction, m.Name(), err)
			}
			secs := red.Seconds[0][e][f]
			rep.Results = append(rep.Results, Result{Ordering: pt.ordering, Fraction: pt.fraction, Removed: pt.removed, Columns: pt.columns,
				Estimator: est.Name(), Score: s.Value, Loss: framework.LossOf(m, s.Value), SE: seOf(s.Influence), Seconds: secs})
			rep.Seconds[est.Name()] += secs
		}
	}
	return rep, nil
}

// columnsOf returns the columns of the units picked, each once, in
// increasing order (groups may share columns).
func columnsOf(units []framework.Feature, picked []int) []int {
	var cols []int
	for _, u := range picked {
		cols = append(cols, units[u].Columns...)
	}
	slices.Sort(cols)
	return slices.Compact(cols)
}

func seOf(inf []float64) float64 {
	if len(inf) < 2 {
		return 0
	}
	return math.Sqrt(stat.Variance(inf, nil) / float64(len(inf)))
}

// Order returns the feature indices in the ordering's order, the first to
// be removed first.
func Order(ctx context.Context, p *framework.Problem, ordering string) ([]int, error) {
	return OrderGroups(ctx, p, ordering, p.Features())
}

// OrderGroups returns the indices of units (groups of columns) in the
// ordering's order, the first to be removed first: by decreasing sum of
// their columns' mean absolute input gradients (grad), or a permutation
// seeded by the run's seed (random).
func OrderGroups(ctx context.Context, p *framework.Problem, ordering string, units []framework.Feature) ([]int, error) {
	switch strings.ToLower(ordering) {
	case "random":
		return rand.New(rand.NewPCG(uint64(p.Seed), 0x70a7)).Perm(len(units)), nil
	case "grad":
		g, err := InputGradients(ctx, p.Full, p.XTrain)
		if err != nil {
			return nil, fmt.Errorf("grad ordering: %w", err)
		}
		score := make([]float64, len(units))
		order := make([]int, len(units))
		for u, f := range units {
			order[u] = u
			for _, j := range f.Columns {
				score[u] += g[j]
			}
		}
		sort.SliceStable(order, func(a, b int) bool { return score[order[a]] > score[order[b]] })
		return order, nil
	}
	return nil, framework.Usagef("unknown ordering %q (want %s)", ordering, strings.Join(Orderings, " or "))
}

// InputGradients returns, for every column j of x, the mean over the rows
// (and sum over the prediction columns) of |d h(x) / d x_j|, by central
// differences of m's Predict with step GradStep.
func InputGradients(ctx context.Context, m framework.Model, x *mat.Dense) ([]float64, error) {
	n, np := x.Dims()
	out := make([]float64, np)
	xs := mat.DenseCopyOf(x)
	for j := 0; j < np; j++ {
		col := mat.Col(nil, j, x)
		var preds [2]*mat.Dense
		for s, sign := range []float64{1, -1} {
			for i, v := range col {
				xs.Set(i, j, v+sign*GradStep)
			}
			pr, err := m.Predict(ctx, xs)
			if err != nil {
				return nil, err
			}
			preds[s] = pr
		}
		for i, v := range col {
			xs.Set(i, j, v)
		}
		pp, pm := preds[0].RawMatrix(), preds[1].RawMatrix()
		var sum float64
		for k := range pp.Data {
			sum += math.Abs(pp.Data[k]-pm.Data[k]) / (2 * GradStep)
		}
		out[j] = sum / float64(n)
	}
	return out, nil
}
