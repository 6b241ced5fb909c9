package framework

// The defaults of a run, defined once: a zero field of Config,
// EstimateOptions or InferOptions means the default below, and vi's flags
// default to the same values, so that a library run with zero settings is
// vi's run without flags (except the seed: Config.Seed is used as given,
// and vi's --seed defaults to 1). The estimators' settings default with the
// estimators (lazy.Estimator's Folds: lazy.DefaultFolds).
const (
	// DefaultTrainFrac is the share of rows in the train split
	// (Config.TrainFrac).
	DefaultTrainFrac = 2.0 / 3.0
	// DefaultLevel is the confidence level of the intervals
	// (EstimateOptions.Level, InferOptions.Level).
	DefaultLevel = 0.95
	// DefaultInference is sample splitting, the zero Inference.
	DefaultInference = Split
	// DefaultPerturb is Perturbed inference's rho when InferOptions.Perturb
	// (EstimateOptions.Perturb) is 0: the noise's sd is half the full
	// model's influence sd. It matters only when Perturbed is asked for;
	// the choice comes from a coverage study on the MLP before issue 14's
	// training (see docs/inference.md).
	DefaultPerturb = 0.5
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
