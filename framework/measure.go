package framework

import "gonum.org/v1/gonum/mat"

// Score is a measure evaluated on a data set: its larger-is-better Value and
// each sample's influence on it, so that standard errors follow. For a
// decomposable measure V = -mean(loss) (or mean(gain)), Influence[i] is
// Value's per-sample term minus its mean, e.g. mean(loss) - loss_i; for a
// smooth function of means (R²) it is the delta-method influence function.
// Either way Value + mean(Influence) = Value and, for two models on the same
// samples, sd(IF_full - IF_reduced)/sqrt(n) is the standard error of the
// difference of their Values.
type Score struct {
	Value     float64
	Influence []float64
}

// Measure is a predictiveness measure: larger is better.
type Measure interface {
	// Name is the registry name ("mse", "accuracy", ...).
	Name() string
	// Supports reports whether the measure applies to a task.
	Supports(t Task) bool
	// Evaluate scores predictions pred (n x 1, as Model.Predict returns)
	// against the responses y.
	Evaluate(y []float64, pred mat.Matrix) (Score, error)
}

// Loss is implemented by a measure whose Value is a negated loss (mse,
// logloss). People read the loss itself, -Value, and a VI (the full
// model's Value minus the reduced model's) as the increase in loss; the
// scores stay larger-is-better in the code and in JSON, where the loss is
// written beside them (LossOf).
type Loss interface {
	Measure
	IsLoss() bool
}

// IsLoss reports whether m is a Loss.
func IsLoss(m Measure) bool {
	l, ok := m.(Loss)
	return ok && l.IsLoss()
}

// IsLossNamed reports whether the registered measure named is a Loss.
func IsLossNamed(name string) bool {
	m, err := LookupMeasure(name)
	return err == nil && IsLoss(m)
}

// Readable is a score as a person reads it under the named measure: the
// loss (-score) for a Loss, the score itself otherwise.
func Readable(measure string, score float64) float64 {
	if IsLossNamed(measure) {
		return -score
	}
	return score
}

// LossOf is the loss of a score under m (-score), nil when m is not a
// Loss: what reports write beside a score.
func LossOf(m Measure, score float64) *float64 {
	if !IsLoss(m) {
		return nil
	}
	l := -score
	return &l
}

// DefaultMeasure names the default measure of a task: mse for regression,
// logloss for binary and multiclass classification. Both are proper
// scoring rules: every row's predicted value or probabilities count, so a
// feature that moves the probabilities shows in its VI, where under
// accuracy only the rows whose predicted class flips do (docs/inference.md
// has the study). pipeline.Run looks it up in the measure registry when it
// is given no measure.
func DefaultMeasure(t Task) string {
	if t == Binary || t == Multiclass {
		return "logloss"
	}
	return "mse"
}

// SignalVariance is implemented by a measure whose paired estimate (a
// reduced model's loss minus the full model's on the same rows) has a
// variance that grows with the importance it estimates. For squared error
// the rows' differences are (f - g)(2(y - f) + (f - g)), whose variance is
// about 4 sigma^2 E[(f - g)^2] + Var((f - g)^2), sigma^2 the full model's
// error: a feature whose VI is larger by t has differences whose variance
// is larger by about 4 sigma^2 t.
type SignalVariance interface {
	Measure
	// SignalVariance is that growth, the variance of one row's paired
	// difference per unit of VI, for the full model's predictions pred
	// (n x 1) of y.
	SignalVariance(y []float64, pred mat.Matrix) (float64, error)
}

// Directional is implemented by a measure whose per-row score is smooth in
// the predictions: the derivative of each row's score along the line from
// one model's predictions to another's is what the covariance test
// (inference.TestCovariance) averages.
type Directional interface {
	Measure
	// Directional returns, for each row i, d/dt s_i(at + t (toward - at))
	// at t = 0, s_i the row's score (larger is better), for predictions at
	// and toward (n x outputs, as Model.Predict returns) of y.
	Directional(y []float64, at, toward mat.Matrix) ([]float64, error)
}
