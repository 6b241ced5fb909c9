package framework

// ModelChoice says how the kind of the full model was chosen: the
// backend's model against models of other kinds (a linear model, say),
// each fitted on the same cross-fitting folds and scored by the same
// loss on the same held-out rows (pipeline.Config.Rivals).
type ModelChoice struct {
	// Chosen is the name of the kind chosen: the backend's or a rival's.
	Chosen string `json:"chosen"`
	// Measure is the loss the kinds were compared by (the task's default
	// measure: mse, logloss).
	Measure string `json:"measure"`
	// Kinds are the backend's model first, then the rivals scored.
	Kinds []KindScore `json:"kinds"`
	// Reason says why, in words.
	Reason string `json:"reason"`
}

// KindScore is one kind's cross-validated loss.
type KindScore struct {
	Name string `json:"name"`
	// Model describes the model fitted (its architecture or penalty).
	Model string  `json:"model,omitempty"`
	Loss  float64 `json:"loss"`
	// Diff is this kind's loss minus the backend model's (0 for the
	// backend's own), DiffSE its standard error from the paired per-row
	// differences.
	Diff   float64 `json:"diff"`
	DiffSE float64 `json:"diff_se"`
}
