package linear

import (
	"context"
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
)

// Model is a linear (regression) or logistic (binary) model; see the
// package documentation.
type Model struct {
	task   framework.Task
	inputs int
	cfg    config
	seed   int64     // seeds the folds of the ridge search (option ridge auto)
	start  []float64 // logistic regression's starting theta, when set (the ridge search's warm start)
	// thetaOnly: the fit estimates theta and nothing else (no covariance,
	// residual variance or degrees of freedom), as the ridge search's
	// models need only their predictions.
	thetaOnly bool

	// Set by Fit, read-only afterwards.
	fitted bool
	mu, sd []float64 // input standardisation
	theta  []float64 // intercept, then slopes on the standardised inputs
	cov    []float64 // (p+1) x (p+1) covariance of theta; NaN for aliased; nil when p+1 > n
	alias  []bool
	rank   int
	sigma2 float64 // residual variance (regression); 1 for binary
	df     float64 // residual degrees of freedom
	iter   int     // Newton iterations (binary)
}

var (
	_ framework.Gradienter = (*Model)(nil)
	_ framework.Kerneler   = (*Model)(nil)
)

// NewModel returns an untrained model for spec; Backend.New is the same
// with the result as a framework.Model.
func NewModel(spec framework.ModelSpec) (*Model, error) {
	if spec.Task != framework.Regression && spec.Task != framework.Binary {
		return nil, framework.Usagef("linear: unsupported task %v", spec.Task)
	}
	if spec.Inputs < 1 {
		return nil, framework.Usagef("linear: model needs at least one input column, got %d", spec.Inputs)
	}
	cfg, err := parseOptions(spec.Options)
	if err != nil {
		return nil, err
	}
	return &Model{task: spec.Task, inputs: spec.Inputs, cfg: cfg, seed: spec.Seed}, nil
}

// NumParams returns p + 1: the intercept and one slope per input.
func (md *Model) NumParams() int { return md.inputs + 1 }

// Params returns a copy of theta: the intercept, then the slopes on the
// standardised inputs.
func (md *Model) Params() []float64 { return append([]float64(nil), md.theta...) }

// Coefficients are a fitted model's coefficients in the inputs' own units
// (h(x) = Intercept + Slopes . x, through the sigmoid for binary) with
// their standard errors.
type Coefficients struct {
	Intercept, InterceptSE float64
	Slopes, SlopeSE        []float64
	// Aliased marks input columns that are linear combinations of earlier
	// ones (or constant): slope 0, standard error NaN. With more
	// parameters than training rows (p+1 > n) no covariance is formed and
	// every standard error is NaN.
	Aliased []bool
	Rank    int     // numerical rank of the design (intercept included)
	Sigma2  float64 // residual variance estimate (regression); 1 for binary
	DF      float64 // residual degrees of freedom: n - rank, or n - trace(H) with a ridge penalty
}

// Coefficients returns the fitted coefficients and standard errors.
func (md *Model) Coefficients() (Coefficients, error) {
	if !md.fitted {
		return Coefficients{}, errors.New("linear: model is not fitted")
	}
	p, q := md.inputs, md.inputs+1
	c := Coefficients{
		Slopes: make([]float64, p), SlopeSE: make([]float64, p), Aliased: make([]bool, p),
		Rank: md.rank, Sigma2: md.sigma2, DF: md.df,
	}
	// Input-scale coefficients are a linear map of theta: slope_k =
	// theta_k / sd_k, intercept = theta_0 - sum_k mu_k theta_k / sd_k.
	a := make([]float64, q) // gradient of the intercept with respect to theta
	a[0] = 1
	c.Intercept = md.theta[0]
	for k := 0; k < p; k++ {
		c.Slopes[k] = md.theta[k+1] / md.sd[k]
		c.Aliased[k] = md.alias[k+1]
		c.SlopeSE[k] = math.NaN()
		if md.cov != nil {
			c.SlopeSE[k] = math.Sqrt(md.cov[(k+1)*q+k+1]) / md.sd[k]
		}
		if c.Aliased[k] {
			c.SlopeSE[k] = math.NaN()
			continue
		}
		c.Intercept -= md.mu[k] * c.Slopes[k]
		a[k+1] = -md.mu[k] / md.sd[k]
	}
	if md.cov == nil {
		c.InterceptSE = math.NaN()
		return c, nil
	}
	v := 0.0
	for i := 0; i < q; i++ {
		for j := 0; j < q; j++ {
			if a[i] != 0 && a[j] != 0 {
				v += a[i] * md.cov[i*q+j] * a[j]
			}
		}
	}
	c.InterceptSE = math.Sqrt(v)
	return c, nil
}

// Iterations returns the number of Newton iterations of a logistic fit (0
// for regression).
func (md *Model) Iterations() int { return md.iter }

// input returns x as a row-major matrix, without a copy for *mat.Dense.
func (md *Model) input(x mat.Matrix) (blas64.General, error) {
	if x == nil {
		return blas64.General{}, errors.New("linear: nil input matrix")
	}
	r, c := x.Dims()
	if c != md.inputs {
		return blas64.General{}, fmt.Errorf("linear: input has %d columns, model expects %d", c, md.inputs)
	}
	if r == 0 {
		return blas64.General{}, errors.New("linear: input has no rows")
	}
	if rm, ok := x.(mat.RawMatrixer); ok {
		return rm.RawMatrix(), nil
	}
	return mat.DenseCopyOf(x).RawMatrix(), nil
}

func (md *Model) ready(ctx context.Context) error {
	if !md.fitted {
		return errors.New("linear: model is not fitted")
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("linear: %w", err)
	}
	return nil
}

// design returns the standardised design [1, z] (n x (p+1)) of x, scaled
// row-wise by s when s is not nil.
func (md *Model) design(x blas64.General, s []float64) blas64.General {
	q := md.inputs + 1
	z := blas64.General{Rows: x.Rows, Cols: q, Stride: q, Data: make([]float64, x.Rows*q)}
	for i := 0; i < x.Rows; i++ {
		row := z.Data[i*q : (i+1)*q]
		xr := x.Data[i*x.Stride : i*x.Stride+md.inputs]
		si := 1.0
		if s != nil {
			si = s[i]
		}
		row[0] = si
		for k, v := range xr {
			row[k+1] = si * (v - md.mu[k]) / md.sd[k]
		}
	}
	return z
}

// Fit estimates the model on the rows of x with responses y. It may be
// called once.
func (md *Model) Fit(ctx context.Context, x mat.Matrix, y []float64) error {
	if md.fitted {
		return errors.New("linear: Fit called twice")
	}
	xg, err := md.input(x)
	if err != nil {
		return err
	}
	n := xg.Rows
	if len(y) != n {
		return fmt.Errorf("linear: Fit: %d rows but %d responses", n, len(y))
	}
	for i, v := range y {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return framework.Usagef("linear: response is not finite in row %d", i)
		}
		if md.task == framework.Binary && v != 0 && v != 1 {
			return framework.Usagef("linear: binary response must be 0 or 1, row %d is %v", i, v)
		}
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("linear: %w", err)
	}
	if md.cfg.auto {
		if md.cfg.ridge, err = md.tuneRidge(ctx, xg, y); err != nil {
			return err
		}
	}
	if err := md.fitRows(ctx, xg, y); err != nil {
		return err
	}
	md.fitted = true
	return nil
}

// fitRows standardises the inputs and estimates theta on the rows of xg
// with the configured penalty.
func (md *Model) fitRows(ctx context.Context, xg blas64.General, y []float64) error {
	n, p := xg.Rows, md.inputs
	md.mu, md.sd = make([]float64, p), make([]float64, p)
	for k := 0; k < p; k++ {
		var s float64
		for i := 0; i < n; i++ {
			s += xg.Data[i*xg.Stride+k]
		}
		mean := s / float64(n)
		var ss float64
		for i := 0; i < n; i++ {
			d := xg.Data[i*xg.Stride+k] - mean
			ss += d * d
		}
		sd := 1.0
		if n > 1 && ss > 0 {
			sd = math.Sqrt(ss / float64(n-1))
		}
		if math.IsNaN(mean) || math.IsInf(mean, 0) || math.IsInf(sd, 0) {
			return framework.Usagef("linear: input column %d is not finite", k)
		}
		md.mu[k], md.sd[k] = mean, sd
	}
	if md.task == framework.Binary {
		return md.fitLogistic(ctx, xg, y)
	}
	return md.fitOLS(xg, y)
}

// augmented returns [z; sqrt(ridge) D] and [b; 0] when ridge > 0, else z
// and b themselves.
func (md *Model) augmented(z blas64.General, b []float64) (blas64.General, []float64) {
	if md.cfg.ridge == 0 {
		return z, b
	}
	q := z.Cols
	n := z.Rows
	a := blas64.General{Rows: n + q - 1, Cols: q, Stride: q, Data: make([]float64, (n+q-1)*q)}
	copy(a.Data, z.Data[:n*q])
	r := math.Sqrt(md.cfg.ridge)
	for k := 1; k < q; k++ {
		a.Data[(n+k-1)*q+k] = r
	}
	bb := make([]float64, n+q-1)
	copy(bb, b)
	return a, bb
}

func (md *Model) fitOLS(xg blas64.General, y []float64) error {
	n, q := xg.Rows, md.inputs+1
	if wide(n, q) {
		return md.fitOLSWide(xg, y)
	}
	// solveLS overwrites the design and the response.
	a, b := md.augmented(md.design(xg, nil), append([]float64(nil), y...))
	s := solveLS(a, b)
	md.theta, md.alias, md.rank = s.theta, s.aliased, s.rank
	if md.thetaOnly {
		return nil
	}
	rss := md.rss(xg, y)
	ainv := s.unscaledCov() // (Z^T Z + ridge D)^-1
	cov := ainv
	df := float64(n - s.rank)
	if r := md.cfg.ridge; r > 0 {
		// Sandwich A^-1 Z^T Z A^-1 = A^-1 - r A^-1 D A^-1, and
		// trace(H) = q - r trace(D A^-1).
		// The product is one matrix multiply: A^-1's columns 1..q-1
		// times their transpose (A^-1 is symmetric).
		cov = append([]float64(nil), ainv...)
		cols := blas64.General{Rows: q, Cols: q - 1, Stride: q, Data: ainv[1:]}
		blas64.Gemm(blas.NoTrans, blas.Trans, -r, cols, cols, 1, blas64.General{Rows: q, Cols: q, Stride: q, Data: cov})
		tr := float64(q)
		for i := 1; i < q; i++ {
			tr -= r * ainv[i*q+i]
		}
		df = float64(n) - tr
	}
	md.setSigma2(rss, df)
	md.cov = scaleCov(cov, md.sigma2, md.alias)
	return nil
}

// fitOLSWide is fitOLS for more parameters than rows: with a ridge
// penalty in the n-dimensional dual (solveRidgeDual), without one by the
// pivoted QR of the n x (p+1) design, whose rank is at most n (the other
// columns aliased). The covariance is not formed: the (p+1)^2 matrix
// would cost O(p^3) time and O(p^2) memory for standard errors that with
// fewer rows than parameters the data cannot support; Coefficients
// reports them as NaN.
func (md *Model) fitOLSWide(xg blas64.General, y []float64) error {
	n, q := xg.Rows, md.inputs+1
	z := md.design(xg, nil)
	df := 0.0
	if r := md.cfg.ridge; r > 0 {
		theta, tr, ok := solveRidgeDual(z, y, r, !md.thetaOnly)
		if !ok {
			return fmt.Errorf("linear: the ridge system of %d rows and %d inputs is not positive definite", n, md.inputs)
		}
		md.theta, md.alias, md.rank = theta, make([]bool, q), q
		df = float64(n) - tr
	} else {
		s := solveLS(z, append([]float64(nil), y...))
		md.theta, md.alias, md.rank = s.theta, s.aliased, s.rank
		df = float64(n - s.rank)
	}
	if md.thetaOnly {
		return nil
	}
	md.setSigma2(md.rss(xg, y), df)
	md.cov = nil
	return nil
}

// rss is the residual sum of squares of the fitted theta on x, y.
func (md *Model) rss(xg blas64.General, y []float64) float64 {
	rss := 0.0
	for i, f := range md.eta(xg, md.theta) {
		rss += (y[i] - f) * (y[i] - f)
	}
	return rss
}

// setSigma2 sets the residual degrees of freedom and variance (NaN
// without degrees of freedom).
func (md *Model) setSigma2(rss, df float64) {
	md.df = df
	md.sigma2 = math.NaN()
	if df > 0 {
		md.sigma2 = rss / df
	}
}

// scaleCov multiplies cov by s2 in place and sets the entries of aliased
// columns to NaN.
func scaleCov(cov []float64, s2 float64, alias []bool) []float64 {
	q := len(alias)
	for i := 0; i < q; i++ {
		for j := 0; j < q; j++ {
			if alias[i] || alias[j] {
				cov[i*q+j] = math.NaN()
			} else {
				cov[i*q+j] *= s2
			}
		}
	}
	return cov
}

// Logistic regression's convergence: relative change of the deviance.
const (
	devTol  = 1e-10
	minW    = 1e-12 // floor of the IRLS weights p(1-p)
	maxEta  = 700   // keeps exp finite
	pLimits = 1e-15
)

func sigmoid(t float64) float64 {
	t = math.Max(-maxEta, math.Min(maxEta, t))
	return 1 / (1 + math.Exp(-t))
}

func (md *Model) fitLogistic(ctx context.Context, xg blas64.General, y []float64) error {
	n, q := xg.Rows, md.inputs+1
	z := md.design(xg, nil)
	theta := make([]float64, q)
	ybar := 0.0
	for _, v := range y {
		ybar += v
	}
	ybar /= float64(n)
	ybar = math.Min(math.Max(ybar, 1e-6), 1-1e-6)
	theta[0] = math.Log(ybar / (1 - ybar))
	if len(md.start) == q {
		copy(theta, md.start) // a warm start (the ridge search's previous penalty)
	}
	eta := make([]float64, n)
	deviance := func(th []float64) float64 {
		d := 0.0
		for i := 0; i < n; i++ {
			e := blas64.Dot(blas64.Vector{N: q, Inc: 1, Data: z.Data[i*q : (i+1)*q]}, blas64.Vector{N: q, Inc: 1, Data: th})
			eta[i] = e
			pr := math.Min(math.Max(sigmoid(e), pLimits), 1-pLimits)
			if y[i] == 1 {
				d -= 2 * math.Log(pr)
			} else {
				d -= 2 * math.Log(1-pr)
			}
		}
		for k := 1; k < q; k++ {
			d += md.cfg.ridge * th[k] * th[k]
		}
		return d
	}
	dev := deviance(theta)
	sw := make([]float64, n)
	rhs := make([]float64, n)
	var s lsq
	converged := false
	for md.iter = 1; md.iter <= md.cfg.maxIter; md.iter++ {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("linear: %w", err)
		}
		for i := 0; i < n; i++ {
			pr := sigmoid(eta[i])
			w := math.Max(pr*(1-pr), minW)
			sw[i] = math.Sqrt(w)
			// sqrt(w) times the working response eta + (y - p)/w.
			rhs[i] = sw[i]*eta[i] + (y[i]-pr)/sw[i]
		}
		next, err := md.irlsStep(xg, sw, rhs, &s)
		if err != nil {
			return err
		}
		nd := deviance(next)
		// Step halving keeps the (convex) objective from rising through
		// round-off or an overshoot.
		for h := 0; h < 30 && nd > dev*(1+1e-12); h++ {
			for k := range next {
				next[k] = (next[k] + theta[k]) / 2
			}
			nd = deviance(next)
		}
		change := math.Abs(nd-dev) / (math.Abs(nd) + 0.1)
		theta, dev = next, nd
		if change < devTol {
			converged = true
			break
		}
	}
	if !converged {
		return fmt.Errorf("linear: logistic regression did not converge in %d iterations "+
			"(the inputs may separate the classes perfectly: set a ridge penalty, e.g. --opt ridge=1, or raise --opt maxiter)",
			md.cfg.maxIter)
	}
	md.theta, md.alias, md.rank = theta, s.aliased, s.rank
	for k := range md.theta {
		if md.alias[k] {
			md.theta[k] = 0
		}
	}
	md.sigma2 = 1
	md.df = float64(n - s.rank)
	md.cov = nil // not formed for more parameters than rows (fitOLSWide)
	if !wide(n, q) && !md.thetaOnly {
		md.cov = scaleCov(s.unscaledCov(), 1, md.alias)
	}
	return nil
}

// irlsStep solves one Newton step of logistic regression, the weighted
// (penalised) least squares of rhs on the design scaled by sw, into s; for
// more parameters than rows with a ridge penalty in the n-dimensional
// dual (solveRidgeDual, every column kept: rank p+1).
func (md *Model) irlsStep(xg blas64.General, sw, rhs []float64, s *lsq) ([]float64, error) {
	n, q := xg.Rows, md.inputs+1
	if wide(n, q) && md.cfg.ridge > 0 {
		theta, _, ok := solveRidgeDual(md.design(xg, sw), rhs, md.cfg.ridge, false)
		if !ok {
			return nil, fmt.Errorf("linear: the weighted ridge system of %d rows and %d inputs is not positive definite", n, md.inputs)
		}
		*s = lsq{theta: theta, aliased: make([]bool, q), rank: q}
		return theta, nil
	}
	a, b := md.augmented(md.design(xg, sw), rhs)
	if md.cfg.ridge == 0 {
		b = append([]float64(nil), rhs...)
	}
	*s = solveLS(a, b)
	return s.theta, nil
}

// eta returns the linear predictor at theta for the rows of x.
func (md *Model) eta(x blas64.General, theta []float64) []float64 {
	// On the input scale: c0 + x . b with b_k = theta_k / sd_k.
	p := md.inputs
	// At least 32 bytes, so 16-byte aligned wherever the allocator puts
	// it (Go's 8- and 24-byte objects are only 8-byte aligned): the Dot
	// below sums in an order that depends on its operands' alignment with
	// OpenBLAS's SSE2 kernels, and p = 1 or 3 gave other bits from run to
	// run there.
	b := make([]float64, p, max(p, 4))
	c0 := theta[0]
	for k := 0; k < p; k++ {
		b[k] = theta[k+1] / md.sd[k]
		c0 -= b[k] * md.mu[k]
	}
	out := make([]float64, x.Rows)
	bv := blas64.Vector{N: p, Inc: 1, Data: b}
	for i := range out {
		out[i] = c0 + blas64.Dot(blas64.Vector{N: p, Inc: 1, Data: x.Data[i*x.Stride : i*x.Stride+p]}, bv)
	}
	return out
}

func (md *Model) predictAt(ctx context.Context, x mat.Matrix, theta []float64) (*mat.Dense, error) {
	if err := md.ready(ctx); err != nil {
		return nil, err
	}
	xg, err := md.input(x)
	if err != nil {
		return nil, err
	}
	e := md.eta(xg, theta)
	if md.task == framework.Binary {
		for i, v := range e {
			e[i] = sigmoid(v)
		}
	}
	return mat.NewDense(len(e), 1, e), nil
}

// Predict returns the n x 1 predictions: means for regression, P(Y = 1)
// for binary.
func (md *Model) Predict(ctx context.Context, x mat.Matrix) (*mat.Dense, error) {
	return md.predictAt(ctx, x, md.theta)
}

// PredictShifted returns the predictions at theta + dtheta.
func (md *Model) PredictShifted(ctx context.Context, x mat.Matrix, dtheta []float64) (*mat.Dense, error) {
	if len(dtheta) != md.inputs+1 {
		return nil, fmt.Errorf("linear: PredictShifted: %d parameter shifts, model has %d parameters", len(dtheta), md.inputs+1)
	}
	th := make([]float64, len(dtheta))
	for k := range th {
		th[k] = md.theta[k] + dtheta[k]
	}
	return md.predictAt(ctx, x, th)
}

// gradScale returns, for binary, the per-row factor p(1-p) of the
// gradient; nil for regression (factor 1).
func (md *Model) gradScale(x blas64.General) []float64 {
	if md.task != framework.Binary {
		return nil
	}
	e := md.eta(x, md.theta)
	for i, v := range e {
		pr := sigmoid(v)
		e[i] = pr * (1 - pr)
	}
	return e
}

// Jacobian returns the n x (p+1) gradients of the predictions: the rows
// (1, z_i), times p_i(1-p_i) for binary.
func (md *Model) Jacobian(ctx context.Context, x mat.Matrix) (*mat.Dense, error) {
	if err := md.ready(ctx); err != nil {
		return nil, err
	}
	xg, err := md.input(x)
	if err != nil {
		return nil, err
	}
	z := md.design(xg, md.gradScale(xg))
	return mat.NewDense(z.Rows, z.Cols, z.Data), nil
}

// Kernel returns Phi(x1) Phi(x2)^T; a nil x2 means x1.
func (md *Model) Kernel(ctx context.Context, x1, x2 mat.Matrix) (*mat.Dense, error) {
	j1, err := md.Jacobian(ctx, x1)
	if err != nil {
		return nil, err
	}
	if x2 == nil {
		r, _ := j1.Dims()
		var k mat.SymDense
		k.SymOuterK(1, j1)
		out := mat.NewDense(r, r, nil)
		out.Copy(&k)
		return out, nil
	}
	j2, err := md.Jacobian(ctx, x2)
	if err != nil {
		return nil, err
	}
	var k mat.Dense
	k.Mul(j1, j2.T())
	return &k, nil
}

// JacobianTVec returns Phi(x)^T a.
func (md *Model) JacobianTVec(ctx context.Context, x mat.Matrix, a []float64) ([]float64, error) {
	j, err := md.Jacobian(ctx, x)
	if err != nil {
		return nil, err
	}
	r, c := j.Dims()
	if len(a) != r {
		return nil, fmt.Errorf("linear: JacobianTVec: %d weights for %d rows", len(a), r)
	}
	out := make([]float64, c)
	mat.NewVecDense(c, out).MulVec(j.T(), mat.NewVecDense(r, a))
	return out, nil
}
