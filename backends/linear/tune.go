package linear

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"

	"gonum.org/v1/gonum/blas/blas64"

	"github.com/lazyvi/lazyvi/framework"
)

// RidgeAuto is the value of option ridge that makes Fit choose the penalty
// by cross-validation on its training rows (see tuneRidge).
const RidgeAuto = "auto"

// Ridge search: the penalties m 10^k for k in ridgeGrid (m the rows
// searched on; the standardised inputs' sums of squares are about m, so
// m 10^k shrinks each slope by about 1/(1 + 10^k), or 1/(1 + 4 10^k) at
// logistic regression's largest weights), scored by tuneFolds-fold
// cross-validation on at most tuneRows rows.
var ridgeGrid = []float64{-4, -3, -2.5, -2, -1.5, -1, -0.5, 0}

const (
	tuneFolds = 5
	tuneRows  = 2000
)

// tuneRidge chooses the ridge penalty of ridgeGrid whose tuneFolds-fold
// cross-validated loss on the rows of x is lowest (squared error for
// regression, log-loss with probabilities clipped to [pLimits, 1 - pLimits]
// for binary): each fold's model is fitted with that penalty on the other
// folds' rows (standardised by their own statistics, as Fit does) and
// scored on the fold. The rows and folds are dealt by a permutation seeded
// with the model's seed, so that a fit is reproducible. Above tuneRows
// rows the search runs on a seeded subsample of tuneRows, and the penalty
// chosen there is used as it is: the best penalty of ridge regression,
// about p sigma^2 / |beta|^2 for standardised inputs, does not grow with
// the rows. Each fold fits the penalties from the largest down, logistic
// regression starting from the previous penalty's fit; a penalty at which
// it does not converge (classes separated) scores +Inf, as do the smaller
// ones on that fold. Ties go to the larger penalty. Too few rows for the
// folds (fewer than 2 per fold) choose 1e-2 n: a mild shrinkage that keeps
// logistic regression finite.
func (md *Model) tuneRidge(ctx context.Context, x blas64.General, y []float64) (float64, error) {
	n := x.Rows
	if n < 2*tuneFolds {
		return 1e-2 * float64(n), nil
	}
	rows := rand.New(rand.NewPCG(uint64(md.seed), 0x71d9e)).Perm(n)
	if n > tuneRows {
		rows = rows[:tuneRows]
	}
	m := float64(len(rows))
	loss := make([]float64, len(ridgeGrid))
	for f := 0; f < tuneFolds; f++ {
		if err := md.foldLosses(ctx, x, y, rows, f, m, loss); err != nil {
			return 0, err
		}
	}
	best := len(ridgeGrid) - 1
	for g := best - 1; g >= 0; g-- {
		if loss[g] < loss[best] {
			best = g
		}
	}
	return m * math.Pow(10, ridgeGrid[best]), nil
}

// foldLosses adds to loss[g] the held-out loss of fold f of rows (of
// tuneFolds) at penalty m 10^ridgeGrid[g], for every g.
func (md *Model) foldLosses(ctx context.Context, x blas64.General, y []float64, rows []int, f int, m float64, loss []float64) error {
	train, ytr, held, yho := foldRows(x, y, rows, f, md.inputs)
	var start []float64
	for g := len(ridgeGrid) - 1; g >= 0; g-- {
		// A least-squares fit does not look at ctx: each penalty's does.
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("linear: %w", err)
		}
		sub := &Model{task: md.task, inputs: md.inputs, start: start, thetaOnly: true,
			cfg: config{ridge: m * math.Pow(10, ridgeGrid[g]), maxIter: md.cfg.maxIter}}
		if err := sub.fitRows(ctx, train, ytr); err != nil {
			if ctx.Err() != nil {
				return err
			}
			for ; g >= 0; g-- {
				loss[g] = math.Inf(1) // not converged: separated classes at this penalty and below
			}
			return nil
		}
		start = sub.theta
		for i, e := range sub.eta(held, sub.theta) {
			loss[g] += sub.rowLoss(e, yho[i])
		}
	}
	return nil
}

// foldRows splits the rows of x (p columns) listed in rows into the
// tuneFolds-fold search's training rows and the held-out rows of fold f.
func foldRows(x blas64.General, y []float64, rows []int, f, p int) (train blas64.General, ytr []float64, held blas64.General, yho []float64) {
	n := len(rows)
	lo, hi := f*n/tuneFolds, (f+1)*n/tuneFolds
	train = blas64.General{Rows: n - (hi - lo), Cols: p, Stride: p, Data: make([]float64, 0, (n-(hi-lo))*p)}
	held = blas64.General{Rows: hi - lo, Cols: p, Stride: p, Data: make([]float64, 0, (hi-lo)*p)}
	for i, r := range rows {
		row := x.Data[r*x.Stride : r*x.Stride+p]
		if i >= lo && i < hi {
			held.Data, yho = append(held.Data, row...), append(yho, y[r])
		} else {
			train.Data, ytr = append(train.Data, row...), append(ytr, y[r])
		}
	}
	return train, ytr, held, yho
}

// rowLoss is one row's loss at linear predictor e: the squared error, or
// for binary the log-loss of the clipped probability.
func (md *Model) rowLoss(e, y float64) float64 {
	if md.task != framework.Binary {
		return (y - e) * (y - e)
	}
	pr := math.Min(math.Max(sigmoid(e), pLimits), 1-pLimits)
	if y == 1 {
		return -math.Log(pr)
	}
	return -math.Log1p(-pr)
}

// TunedOptions implements framework.Tuner: with option ridge auto, the
// penalty Fit chose, so that models refitted for the same problem (the
// retrain estimator's) use it instead of searching again.
func (md *Model) TunedOptions() map[string]string {
	if !md.cfg.auto || !md.fitted {
		return nil
	}
	return map[string]string{"ridge": strconv.FormatFloat(md.cfg.ridge, 'g', -1, 64)}
}

// FitReport implements framework.FitReporter: the model's kind and penalty
// in Architecture ("logistic regression, cross-validated ridge 3.2").
func (md *Model) FitReport() framework.FitReport {
	kind := "least squares"
	if md.task == framework.Binary {
		kind = "logistic regression"
	}
	how := ""
	if md.cfg.auto {
		how = "cross-validated "
	}
	return framework.FitReport{Architecture: fmt.Sprintf("%s, %sridge %.3g", kind, how, md.cfg.ridge)}
}

// RefitPenalty implements framework.RefitPenalizer for least squares with
// option ridge auto (vi's default linear model): the penalty the fit chose,
// on the gradient features (1, z) that are the fit's own design. Logistic
// regression's refit is no ridge regression on its gradient features, and
// a fixed penalty keeps lazy's own search, as the plugin transport (which
// does not carry the method) keeps it for a served linear backend: ok is
// false.
func (md *Model) RefitPenalty() (float64, bool) {
	if md.task != framework.Regression || !md.cfg.auto || !(md.cfg.ridge > 0) {
		return 0, false
	}
	return md.cfg.ridge, true
}

var (
	_ framework.Tuner          = (*Model)(nil)
	_ framework.FitReporter    = (*Model)(nil)
	_ framework.RefitPenalizer = (*Model)(nil)
)
