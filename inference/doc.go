// Package inference turns a run's reduced models into variable importance
// estimates: VI, standard error, confidence interval and one-sided p-value
// per estimator and feature (Reductions.Infer), by sample splitting, the
// paper's Wald interval or a perturbed paired estimate (Inference), over
// one split, cross-fitted folds or repetitions of either (InferRepeated),
// the repetitions' predictions averaged (InferOptions.Ensemble) and the
// paired estimate extrapolated to infinitely many of them (Debias, with a
// bias-aware interval: BiasAware), with p-values adjusted for
// multiplicity (AdjustPValues).
package inference
