// Package cpi holds conditional permutation importance (CPI: Chamma,
// Engemann and Thirion, NeurIPS 2023) in its Sobol-CPI form (Reyero Lobo,
// Neuvial and Thirion, 2025), so that it estimates the importance retrain
// and lazy estimate: the loss of the reduced model E[f(x) | x_-j] minus
// the full model's. Importing the package registers it as "cpi".
//
// The conditional sampler is a linear regression of the feature's columns
// on the other columns (and an intercept), fitted by least squares on the
// train rows; a feature's value on an evaluation row is replaced by its
// prediction plus the residual of another evaluation row, drawn by a
// permutation of those rows (a group's columns share the permutation, so
// that their residuals keep their joint law). This is exact for Gaussian
// features, the paper's settings, and for any x_j that is linear in x_-j
// with noise independent of x_-j; elsewhere the sampler is misspecified,
// and then, by Sobol-CPI's double robustness, the importance of a null
// feature is still zero for a model that ignores it, but that of an
// important one is biased.
//
// CPI evaluates the loss of f on one such sample per row; its expectation,
// for a model equal to the truth, is twice the conditional importance.
// Sobol-CPI averages the model's predictions over Draws samples per row
// first, which estimates E[f(x) | x_-j], the reduced model, and scores
// that. The average keeps a variance Var(f(x) | x_-j) / Draws, which adds
// to the squared loss: for a linear model the estimate is the conditional
// importance times (1 + 1/Draws), 2% high at the default 50.
package cpi

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/lazyvi/lazyvi/estimators/internal/resample"
	"github.com/lazyvi/lazyvi/framework"
	"gonum.org/v1/gonum/mat"
)

// DefaultDraws is the conditional samples averaged per evaluation row.
const DefaultDraws = 50

// MaxDraws bounds CPI.Draws (vi's --cpi-draws).
const MaxDraws = 1000

func init() { framework.RegisterEstimator(CPI{Draws: DefaultDraws}) }

// CPI is Sobol-CPI with a linear conditional sampler.
type CPI struct {
	// Draws is the number of conditional samples whose predictions are
	// averaged per row (at least 1; 1 is the original CPI, which
	// estimates twice the conditional importance for a correct model).
	Draws int
}

// Name returns "cpi".
func (CPI) Name() string { return "cpi" }

// ConditionalMean reports whether the reduced model averages the full
// model over enough conditional samples of the feature to stand for
// E[f(x) | x_-j] (framework.ConditionalMean), so that the covariance test
// applies: at least MinConditionalDraws. The draws' Monte Carlo variance
// adds Var(f(x) | x_-j)/Draws to the covariance's mean (a null's variance
// in f is what the network fitted through it, small), and with Draws 1 it
// would add all of it.
func (c CPI) ConditionalMean() bool { return c.Draws >= MinConditionalDraws }

// MinConditionalDraws is the fewest draws with which cpi's reduced model
// counts as the full model's conditional mean (CPI.ConditionalMean).
const MinConditionalDraws = 10

// Describe implements framework.Describer.
func (CPI) Describe() string {
	return "the full model averaged over conditional samples of the feature given the others (Sobol-CPI, linear sampler; no refit)"
}

// Settings implements framework.Configurer: cpi-draws.
func (c CPI) Settings() []framework.OptionInfo {
	return []framework.OptionInfo{{Name: "cpi-draws", Default: strconv.Itoa(c.Draws),
		Usage: "cpi: conditional `samples` averaged per row (1: the original CPI, twice the importance)"}}
}

// Configure implements framework.Configurer.
func (c CPI) Configure(settings map[string]string) (framework.Estimator, error) {
	for k, v := range settings {
		if k != "cpi-draws" {
			return nil, framework.Usagef("%s is not a setting of estimator cpi (settings: cpi-draws)", k)
		}
		n, err := framework.ParseCount("cpi-draws", v, 1, MaxDraws, "the average's excess variance falls as 1/draws, 0.1% of the importance at the bound")
		if err != nil {
			return nil, err
		}
		c.Draws = n
	}
	return c, nil
}

// Reduce averages the full model's predictions over Draws conditional
// samples of the feature's columns on every evaluation row.
func (c CPI) Reduce(ctx context.Context, p *framework.Problem, f framework.Feature) (framework.Reduced, error) {
	draws := c.Draws
	if draws < 1 {
		draws = DefaultDraws
	}
	fit, err := fitSampler(p.XTrain, f.Columns)
	if err != nil {
		return framework.Reduced{}, fmt.Errorf("cpi: %s: %w", f.Name, err)
	}
	mean, resid := fit.split(p.XEval)
	n, _ := p.XEval.Dims()
	rng := resample.Stream(p.Seed, f.Name, "cpi")
	x := mat.DenseCopyOf(p.XEval)
	var sum *mat.Dense
	for d := 0; d < draws; d++ {
		if err := ctx.Err(); err != nil {
			return framework.Reduced{}, err
		}
		resample.PermuteInto(x, f.Columns, resid, rng.Perm(n))
		for i := 0; i < n; i++ {
			for k, j := range f.Columns {
				x.Set(i, j, x.At(i, j)+mean.At(i, k))
			}
		}
		pred, err := p.Full.Predict(ctx, x)
		if err != nil {
			return framework.Reduced{}, fmt.Errorf("cpi: predict: %w", err)
		}
		if sum == nil {
			sum = mat.DenseCopyOf(pred)
		} else {
			sum.Add(sum, pred)
		}
	}
	sum.Scale(1/float64(draws), sum)
	return framework.Reduced{Pred: sum}, nil
}

// sampler is the linear regression of a feature's columns on the others:
// coef's first row is the intercept, the others follow rest's order.
type sampler struct {
	cols, rest []int
	coef       *mat.Dense // (len(rest)+1) x len(cols)
}

// ridgeShare is the ridge penalty of the sampler's normal equations, per
// train row: negligible beside a standardised column's sum of squares (one
// per row), and enough to keep them solvable when columns are collinear.
const ridgeShare = 1e-8

// fitSampler regresses x's columns cols on the other columns and an
// intercept by least squares.
func fitSampler(x *mat.Dense, cols []int) (*sampler, error) {
	n, p := x.Dims()
	var rest []int
	for j := 0; j < p; j++ {
		if !slices.Contains(cols, j) {
			rest = append(rest, j)
		}
	}
	a := design(x, rest)
	b := resample.Columns(x, cols)
	var ata mat.SymDense
	ata.SymOuterK(1, a.T())
	for i := 0; i < len(rest)+1; i++ {
		ata.SetSym(i, i, ata.At(i, i)+ridgeShare*float64(n))
	}
	var chol mat.Cholesky
	if !chol.Factorize(&ata) {
		return nil, fmt.Errorf("the conditional sampler's normal equations are not positive definite")
	}
	var atb, coef mat.Dense
	atb.Mul(a.T(), b)
	if err := chol.SolveTo(&coef, &atb); err != nil {
		return nil, fmt.Errorf("solve the conditional sampler: %w", err)
	}
	return &sampler{cols: cols, rest: rest, coef: &coef}, nil
}

// design returns [1, x[:, rest]].
func design(x mat.Matrix, rest []int) *mat.Dense {
	n, _ := x.Dims()
	a := mat.NewDense(n, len(rest)+1, nil)
	for i := 0; i < n; i++ {
		a.Set(i, 0, 1)
		for k, j := range rest {
			a.Set(i, k+1, x.At(i, j))
		}
	}
	return a
}

// split returns the sampler's conditional means of x's rows and the
// residuals x[:, cols] minus them.
func (s *sampler) split(x mat.Matrix) (mean, resid *mat.Dense) {
	mean = &mat.Dense{}
	mean.Mul(design(x, s.rest), s.coef)
	resid = resample.Columns(x, s.cols)
	resid.Sub(resid, mean)
	return mean, resid
}
