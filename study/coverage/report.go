package coverage

import ()

// Report is the study's result: the setting, how it ran, and a Row per
// candidate, estimator and feature (vi bench coverage --format json writes
// it).
type Report struct {
	Setting  string  `json:"setting"`
	Data     string  `json:"data,omitempty"`   // semi: the data set
	Signal   float64 `json:"signal,omitempty"` // semi: Var share of b z
	Copy     float64 `json:"copy,omitempty"`   // semi: Corr(copy_<c>, c), 0: no copy
	N        int     `json:"n"`
	Rho      float64 `json:"rho"`
	Reps     int     `json:"reps"`
	CrossFit int     `json:"crossfit"`
	Repeats  int     `json:"repeats"`
	Level    float64 `json:"level"`
	Measure  string  `json:"measure"`
	Hidden   string  `json:"hidden,omitempty"`
	// Kinds counts the repetitions whose full model was of each kind,
	// where it was chosen against rivals ("linear": 97, "mlp": 3).
	Kinds      map[string]int `json:"kinds,omitempty"`
	Seconds    float64        `json:"seconds"`
	Candidates []string       `json:"candidates"`
	Rows       []Row          `json:"rows"`
}

// Row is one candidate, estimator and feature over the reps. Truth,
// Bias and Coverage are null for a feature whose truth is unknown (the real
// features of the semi-synthetic setting).
type Row struct {
	Candidate string   `json:"candidate"`
	Estimator string   `json:"estimator"`
	Feature   string   `json:"feature"`
	Truth     *float64 `json:"truth"`
	MeanVI    float64  `json:"mean_vi"`
	Bias      *float64 `json:"bias"`     // mean VI - truth
	SDVI      float64  `json:"sd_vi"`    // empirical sd of the estimates
	MeanSE    float64  `json:"mean_se"`  // mean reported standard error
	Coverage  *float64 `json:"coverage"` // share of intervals containing the truth
	// Reject05 is the share of p-values below 0.05 (H0: VI <= 0): the
	// type I error for a null feature, the power otherwise.
	Reject05 float64 `json:"reject_05"`
	// Incoherent is the share of results whose interval does not contain
	// their estimate, or lies above 0 where p >= (1 - level)/2 or not
	// where p < (1 - level)/2.
	Incoherent float64 `json:"incoherent"`
}
