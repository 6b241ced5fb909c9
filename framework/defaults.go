package framework

// The defaults of a run, defined once: a zero field of Config,
// EstimateOptions or InferOptions means the default below, and vi's flags
// default to the same values, so that a library run with zero settings is
// vi's run without flags (except the seed: Config.Seed is used as given,
// and vi's --seed defaults to 1).
const (
	// DefaultTrainFrac is the share of rows in the train split
	// (Config.TrainFrac).
	DefaultTrainFrac = 2.0 / 3.0
	// DefaultFolds is the number of cross-validation folds for lazy's
	// penalty (Config.Folds). Three folds instead of five cut lazy's cost
	// by 2-2.5x (one factorization of (2/3 n1)^3 per fold instead of
	// (4/5 n1)^3) with the same accuracy: 100 repetitions of the linear
	// setting (rho 0.9, n 2000) gave the same bias to 1e-4 and the same
	// coverage within 0.01.
	DefaultFolds = 3
	// DefaultLevel is the confidence level of the intervals
	// (EstimateOptions.Level, InferOptions.Level).
	DefaultLevel = 0.95
	// DefaultInference is sample splitting, the zero Inference.
	DefaultInference = Split
)

// DefaultMeasure names the default measure of a task: mse for regression,
// accuracy for binary and multiclass classification. Run looks it up in
// the measure registry when it is given no measure.
func DefaultMeasure(t Task) string {
	if t == Binary || t == Multiclass {
		return "accuracy"
	}
	return "mse"
}
