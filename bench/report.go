// Package bench times the estimators: every estimator over the features
// of one trained full model, one estimator at a time so that each one's
// wall time is its own, with where its time goes and its error against the
// truth or against retrain. The vi command's "vi bench" runs it on the
// paper's simulated settings and on a user's data.
package bench

import (
	"github.com/lazyvi/lazyvi/framework"
)

// Report is one timing run: a data set of N rows and P features, the full
// model's training time, and a Result per estimator (vi bench --format
// json writes it).
type Report struct {
	Case        string   `json:"case"`
	Backend     string   `json:"backend,omitempty"` // vi bench data's --backend (or plugin), "" for mlp
	N           int      `json:"n"`
	P           int      `json:"p"`
	Width       string   `json:"width"`
	Epochs      int      `json:"epochs,omitempty"` // the MLP's epoch cap when --epochs set it
	Workers     int      `json:"workers"`
	FullSeconds float64  `json:"full_seconds"`
	Results     []Result `json:"results"`
}

// Result is one estimator's timing over the features, and its error.
type Result struct {
	Estimator string `json:"estimator"`
	Features  int    `json:"features"`
	// SecondsTotal is the wall time of the estimator over all features
	// (Workers at a time); SecondsPerFeature is SecondsTotal/Features, the
	// throughput; SecondsPerFeatureMedian the median of each feature's own
	// wall time.
	SecondsTotal            float64 `json:"seconds_total"`
	SecondsPerFeature       float64 `json:"seconds_per_feature"`
	SecondsPerFeatureMedian float64 `json:"seconds_per_feature_median"`
	// ErrorMean is the mean over features of |VI - truth| (ErrorAgainst
	// "truth") or, where the truth is unknown, of |VI - VI(retrain)|.
	ErrorMean    *float64 `json:"error_mean,omitempty"`
	ErrorAgainst string   `json:"error_against,omitempty"`
	// At scale (lazy's matrix-free solves): the rows its penalty was
	// chosen on, the Krylov steps and counted flops of its final solves
	// summed over the features, and those flops per second of the
	// features' own wall time (a lower bound on the solves' rate: the
	// time includes the penalty search and the transport).
	CVRows      int     `json:"cv_rows,omitempty"`
	KrylovSteps int     `json:"krylov_steps,omitempty"`
	Flops       float64 `json:"flops,omitempty"`
	GFlopsRate  float64 `json:"gflop_per_s,omitempty"`
	// Steps is where the estimator's time went (framework.Stages): each
	// step's seconds summed over the workers, its share of all the
	// steps' seconds, its counted flops and their rate; StepsGFlops is
	// the rate of all the counted flops over the seconds of the steps
	// that count them.
	Steps       []Step  `json:"steps,omitempty"`
	StepsGFlops float64 `json:"steps_gflop_per_s,omitempty"`
}

// Step is one step of an estimator's reductions.
type Step struct {
	Name    string  `json:"name"`
	Seconds float64 `json:"seconds"`
	Share   float64 `json:"share"`
	Flops   float64 `json:"flops,omitempty"`
	GFlops  float64 `json:"gflop_per_s,omitempty"`
}

// stepsOf summarises the stages of an estimator's reductions.
func stepsOf(totals []framework.StageTotal) (steps []Step, gflops float64) {
	var secs, counted, countedSecs float64
	for _, t := range totals {
		secs += t.Seconds
	}
	for _, t := range totals {
		st := Step{Name: t.Name, Seconds: t.Seconds, Flops: t.Flops}
		if secs > 0 {
			st.Share = t.Seconds / secs
		}
		if t.Flops > 0 && t.Seconds > 0 {
			st.GFlops = t.Flops / t.Seconds / 1e9
			counted += t.Flops
			countedSecs += t.Seconds
		}
		steps = append(steps, st)
	}
	if countedSecs > 0 {
		gflops = counted / countedSecs / 1e9
	}
	return steps, gflops
}
