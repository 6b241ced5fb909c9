package inference

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/lazyvi/lazyvi/framework"
	"gonum.org/v1/gonum/mat"
)

// ensembleOrderStream keys the stream that orders the ensemble's rows.
const ensembleOrderStream = 0x656e73656d626c65 // "ensemble"

// ensembleRows are the data rows that the repetition r evaluates, in an
// order drawn from its first fold's seed: the layout of the ensemble (see
// average; split inference scores the full model on the first half of the
// order, the reduced model on the second). average checks that they are
// each evaluated once.
func ensembleRows(r *Reductions) []int {
	var rows []int
	for _, p := range r.Folds {
		rows = append(rows, p.EvalRows...)
	}
	slices.Sort(rows)
	perm := rand.New(rand.NewPCG(uint64(r.Folds[0].Seed), ensembleOrderStream)).Perm(len(rows))
	ordered := make([]int, len(rows))
	for i, j := range perm {
		ordered[i] = rows[j]
	}
	return ordered
}

// average combines the repetitions reps of a cross-fit into one
// Reductions with a single fold whose rows are the data rows rows
// (ensembleRows): each model's predictions on a row (the full model's, each
// estimator's baseline and reduced models') are the mean of that row's
// out-of-fold predictions over the repetitions. Every repetition must
// evaluate each of the rows once (as cross-fitting does) and hold every
// reduction (SplitOnly leaves some out). With one repetition it is that
// repetition laid out as the ensemble is, which is what the spread of the
// repetitions is taken on.
//
// Averaging the out-of-fold predictions of models trained on different
// folds and seeds shrinks what each network fitted of its training data's
// noise; that noise is what biases a paired estimate (a null feature's VI
// comes out -E[g^2], g the noise a network fitted through it).
func average(reps []*Reductions, rows []int) (*Reductions, error) {
	r0 := reps[0]
	n := len(rows)
	pos := make(map[int]int, n)
	for i, row := range rows {
		pos[row] = i
	}
	_, p := r0.Folds[0].XEval.Dims()
	_, outs := r0.Folds[0].FullEval.Dims()
	ne, nf := len(r0.Estimators), len(r0.Features)
	x := mat.NewDense(n, p, nil)
	y := make([]float64, n)
	full := mat.NewDense(n, outs, nil)
	base := make([]*mat.Dense, ne)
	// reduced[e][f][d]: draw d of the reduced predictions (Pred, then the
	// Draws), averaged draw by draw; every reduction has as many draws as
	// the first's.
	reduced := make([][][]*mat.Dense, ne)
	hasBase := make([]bool, ne)
	for e := range reduced {
		base[e] = mat.NewDense(n, outs, nil)
		hasBase[e] = true
		reduced[e] = make([][]*mat.Dense, nf)
		for f := range reduced[e] {
			draws := 1 + len(r0.Reduced[0][e][f].Draws)
			for range draws {
				reduced[e][f] = append(reduced[e][f], mat.NewDense(n, outs, nil))
			}
		}
	}
	w := 1 / float64(len(reps))
	for m, r := range reps {
		if len(r.Estimators) != ne || len(r.Features) != nf {
			return nil, fmt.Errorf("ensemble: repetition %d has %d estimators and %d features, the first %d and %d", m+1, len(r.Estimators), len(r.Features), ne, nf)
		}
		total := 0
		count := make([]int, n)
		for k, fold := range r.Folds {
			if len(fold.EvalRows) != len(fold.YEval) {
				return nil, fmt.Errorf("ensemble: repetition %d, fold %d does not name its evaluation rows", m+1, k+1)
			}
			if err := sameColumns(outs, fold.FullEval, r, k); err != nil {
				return nil, fmt.Errorf("ensemble: repetition %d, fold %d: %w", m+1, k+1, err)
			}
			for i, row := range fold.EvalRows {
				at, ok := pos[row]
				if !ok {
					return nil, fmt.Errorf("ensemble: repetition %d evaluates data row %d, which the first does not", m+1, row+1)
				}
				if count[at]++; count[at] > 1 {
					return nil, fmt.Errorf("ensemble: data row %d is evaluated twice in repetition %d (cross-fitting evaluates each row once)", row+1, m+1)
				}
				if m == 0 {
					x.SetRow(at, fold.XEval.RawRowView(i))
					y[at] = fold.YEval[i]
				}
				addRow(full, at, fold.FullEval, i, w)
				for e := range ne {
					if k >= len(r.Base) || r.Base[k][e].Pred == nil {
						hasBase[e] = false
					} else {
						addRow(base[e], at, r.Base[k][e].Pred, i, w)
					}
					for f := range nf {
						preds := r.Reduced[k][e][f].Predictions()
						if preds == nil {
							return nil, fmt.Errorf("ensemble: repetition %d, fold %d lacks the reduction of feature %s (skipped for split inference)", m+1, k+1, r.Features[f].Name)
						}
						if len(preds) != len(reduced[e][f]) {
							return nil, fmt.Errorf("ensemble: repetition %d, fold %d has %d draws of feature %s, the first %d", m+1, k+1, len(preds), r.Features[f].Name, len(reduced[e][f]))
						}
						for d, pred := range preds {
							addRow(reduced[e][f][d], at, pred, i, w)
						}
					}
				}
			}
			total += len(fold.EvalRows)
		}
		if total != n {
			return nil, fmt.Errorf("ensemble: repetition %d evaluates %d rows, the first %d", m+1, total, n)
		}
	}
	fold := *r0.Folds[0]
	fold.XEval, fold.YEval, fold.EvalRows, fold.FullEval = x, y, rows, full
	out := &Reductions{Folds: []*framework.Problem{&fold}, Estimators: r0.Estimators, Features: r0.Features,
		Reduced: [][][]framework.Reduced{make([][]framework.Reduced, ne)}, Base: [][]framework.Reduced{make([]framework.Reduced, ne)}}
	for e := range ne {
		out.Reduced[0][e] = make([]framework.Reduced, nf)
		for f := range nf {
			out.Reduced[0][e][f] = framework.Reduced{Pred: reduced[e][f][0], Draws: reduced[e][f][1:]}
		}
		if hasBase[e] {
			out.Base[0][e] = framework.Reduced{Pred: base[e]}
		}
	}
	return out, nil
}

// sameColumns reports a prediction of fold k of r (the full model's full,
// a baseline's, a reduced model's) without outs columns.
func sameColumns(outs int, full *mat.Dense, r *Reductions, k int) error {
	preds := []*mat.Dense{full}
	for e := range r.Reduced[k] {
		if k < len(r.Base) && r.Base[k][e].Pred != nil {
			preds = append(preds, r.Base[k][e].Pred)
		}
		for _, red := range r.Reduced[k][e] {
			preds = append(preds, red.Predictions()...)
		}
	}
	for _, p := range preds {
		if _, c := p.Dims(); c != outs {
			return fmt.Errorf("a model predicts %d outputs, the first %d", c, outs)
		}
	}
	return nil
}

// addRow adds w times row i of src to row at of dst.
func addRow(dst *mat.Dense, at int, src *mat.Dense, i int, w float64) {
	d, s := dst.RawRowView(at), src.RawRowView(i)
	for j := range d {
		d[j] += w * s[j]
	}
}
