package framework

// The defaults of a run, defined once: a zero field of Config,
// EstimateOptions or InferOptions means the default below, and vi's flags
// default to the same values, so that a library run with zero settings is
// vi's run without flags (except the seed: Config.Seed is used as given,
// and vi's --seed defaults to 1). The estimators' settings default with the
// estimators (estimators.Lazy's Folds: estimators.DefaultFolds).
const (
	// DefaultTrainFrac is the share of rows in the train split
	// (Config.TrainFrac).
	DefaultTrainFrac = 2.0 / 3.0
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
