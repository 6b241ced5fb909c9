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

// Ridge search: the penalties n * 10^k for k in ridgeGrid (n the training
// rows; the standardised inputs' sums of squares are about n, so n * 10^k
// shrinks each slope by about 1/(1 + 10^k), or 1/(1 + 4 10^k) at
// logistic regression's largest weights), scored by tuneFolds-fold
// cross-validation.
var ridgeGrid = []float64{-4, -3, -2.5, -2, -1.5, -1, -0.5, 0}

const tuneFolds = 5

// tuneRidge chooses the ridge penalty of ridgeGrid whose tuneFolds-fold
// cross-validated loss on the rows of x is lowest (squared error for
// regression, log-loss with probabilities clipped to [pLimits, 1 - pLimits]
// for binary): each fold's model is fitted with that penalty on the other
// folds' rows (standardised by their own statistics, as Fit does) and
// scored on the fold. The folds are dealt by a permutation seeded with the
// model's seed, so that a fit is reproducible. A penalty at which a fold's
// logistic regression does not converge (classes separated) scores +Inf;
// ties go to the larger penalty. Too few rows for the folds (fewer than
// 2 per fold) choose 1e-2 n: a mild shrinkage that keeps logistic
// regression finite.
func (md *Model) tuneRidge(ctx context.Context, x blas64.General, y []float64) (float64, error) {
	n := x.Rows
	if n < 2*tuneFolds {
		return 1e-2 * float64(n), nil
	}
	perm := rand.New(rand.NewPCG(uint64(md.seed), 0x71d9e)).Perm(n)
	var best float64
	bestLoss := math.Inf(1)
	for _, k := range ridgeGrid {
		ridge := float64(n) * math.Pow(10, k)
		loss, err := md.cvLoss(ctx, x, y, perm, ridge)
		if err != nil {
			return 0, err
		}
		if loss <= bestLoss {
			best, bestLoss = ridge, loss
		}
	}
	return best, nil
}

// cvLoss is the mean held-out loss of the models with penalty ridge over
// the tuneFolds folds of perm.
func (md *Model) cvLoss(ctx context.Context, x blas64.General, y []float64, perm []int, ridge float64) (float64, error) {
	n, p := x.Rows, md.inputs
	var total float64
	for f := 0; f < tuneFolds; f++ {
		lo, hi := f*n/tuneFolds, (f+1)*n/tuneFolds
		train := blas64.General{Rows: n - (hi - lo), Cols: p, Stride: p, Data: make([]float64, 0, (n-(hi-lo))*p)}
		held := blas64.General{Rows: hi - lo, Cols: p, Stride: p, Data: make([]float64, 0, (hi-lo)*p)}
		ytr, yho := make([]float64, 0, train.Rows), make([]float64, 0, held.Rows)
		for i, r := range perm {
			row := x.Data[r*x.Stride : r*x.Stride+p]
			if i >= lo && i < hi {
				held.Data, yho = append(held.Data, row...), append(yho, y[r])
			} else {
				train.Data, ytr = append(train.Data, row...), append(ytr, y[r])
			}
		}
		sub := &Model{task: md.task, inputs: p, cfg: config{ridge: ridge, maxIter: md.cfg.maxIter}}
		if err := sub.fitRows(ctx, train, ytr); err != nil {
			if ctx.Err() != nil {
				return 0, err
			}
			return math.Inf(1), nil // not converged: separated classes at this penalty
		}
		for i, e := range sub.eta(held, sub.theta) {
			total += sub.rowLoss(e, yho[i])
		}
	}
	return total / float64(n), nil
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

var (
	_ framework.Tuner       = (*Model)(nil)
	_ framework.FitReporter = (*Model)(nil)
)
