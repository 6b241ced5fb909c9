// Package linear is lazyvi's classical baseline: ordinary least squares for
// regression and logistic regression for a binary response, optionally with
// a ridge penalty, on gonum. Importing it (a blank import is enough)
// registers the backend as "linear"; Backend and NewModel use it without the
// registry.
//
// # Model
//
// Fit standardises each input column with the training rows' mean and
// standard deviation, z_k = (x_k - mean_k) / sd_k (a constant column is only
// centred, so it becomes zero), and fits
//
//	regression: h(x) = theta_0 + sum_k theta_k z_k
//	binary:     h(x) = sigmoid(theta_0 + sum_k theta_k z_k) = P(Y = 1)
//
// The parameters theta (NumParams = p + 1: the intercept, then one slope per
// input column) are on the standardised scale; Coefficients reports them in
// the inputs' own units with their standard errors.
//
// Regression minimises ||y - Z theta||^2 + ridge ||theta_{1..p}||^2 (the
// intercept is not penalised; option ridge, default 0, is unnormalised like
// sklearn's Ridge(alpha), but on the standardised inputs). It is solved by a
// column-pivoted QR decomposition (LAPACK's Dgeqp3 in gonum) of Z, with the
// penalty as p extra rows sqrt(ridge) I when ridge > 0, so that the normal
// equations, whose condition number is the square of Z's, are never formed.
// Logistic regression minimises the log-loss sum plus ridge/2
// ||theta_{1..p}||^2 by Newton's method (iteratively reweighted least
// squares, the same QR on sqrt(W) Z each step), to a relative change of the
// deviance below 1e-10 or option maxiter iterations.
//
// # Rank deficiency
//
// A column whose pivoted-QR diagonal falls below 1e-7 times the largest
// (R's lm tolerance) is aliased: a linear combination of the columns before
// it. Its coefficient is 0 and its standard error NaN, and the fit is the
// least-squares fit on the other columns, as lm reports it. This is the
// normal case for the retrain estimator, whose reduced data has the dropped
// column set to a constant.
//
// # Standard errors
//
// For OLS, Cov(theta) = sigma^2 (Z^T Z)^-1 on the non-aliased columns with
// sigma^2 = RSS / (n - rank). With a ridge penalty the covariance is the
// sandwich sigma^2 A^-1 Z^T Z A^-1 (A = Z^T Z + ridge D, D the identity
// without the intercept), conditional on the inputs, and the residual degrees
// of freedom are n - trace(Z A^-1 Z^T). For logistic regression it is the
// inverse of the (penalised) Fisher information at the estimate.
//
// # Wide data
//
// With more parameters than training rows (p+1 > n) the fit is solved in
// the n-dimensional dual: with a ridge penalty the slopes are C^T (C C^T +
// ridge I)^-1 y_c (C the standardised inputs with the intercept projected
// out), O(n^2 p) time and O(n p) memory instead of the primal QR's
// (n+p) x (p+1) matrix; without one the pivoted QR of the n x (p+1) design
// keeps at most n columns and aliases the others. Logistic regression's
// Newton steps are solved the same way. No covariance is formed (it would
// be (p+1)^2 numbers and O(p^3) time, for standard errors that fewer rows
// than parameters cannot support): Coefficients reports them as NaN.
//
// # Gradients
//
// A linear model is its own linearisation: the gradient of h with respect to
// theta is (1, z) for regression and p(1-p) (1, z) for binary, so the model
// is a framework.Gradienter and a framework.Kerneler (K = Z1 Z2^T + 1, scaled
// by p(1-p) on both sides for binary). For regression the lazy estimator's
// ridge regression on these features, with a vanishing penalty, is exactly
// OLS refitted on the dropped data: lazy on this backend reproduces retrain
// to rounding error.
//
// # Concurrency
//
// Fit must complete before any other method is called; afterwards the model
// is read-only and safe for concurrent use. Inputs are never modified.
package linear
