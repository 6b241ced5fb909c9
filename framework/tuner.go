package framework

// Tuner is an optional interface of a Model that chooses some of its
// options while it fits (a penalty chosen by cross-validation, say).
// TunedOptions, valid after Fit or a load, returns them as option values
// that build the same kind of model without the search: the options the
// models refitted for the same problem (the retrain estimator's reduced
// models) take, so that they differ from the full model only by the data.
// nil when the model tuned nothing.
type Tuner interface {
	TunedOptions() map[string]string
}

// RefitPenalizer is an optional interface of a Gradienter whose refit on
// other data is itself a ridge regression on its gradient features (least
// squares is its own linearisation): RefitPenalty returns the penalty of
// that regression, and ok, so that the lazy estimator uses it instead of
// choosing one by cross-validation, and is the model's refit up to the
// penalty's pull towards the full model's parameters (of the order of the
// penalty over the rows). Where lazy chooses its own penalty its
// cross-validation, indifferent between a small update and none for a
// feature that matters little, may keep the full model's weight on a null
// feature correlated with others, as dropout does. The plugin transport
// does not carry it.
type RefitPenalizer interface {
	RefitPenalty() (penalty float64, ok bool)
}
