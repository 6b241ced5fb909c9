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

// TunedOptions returns m's TunedOptions, nil when m is not a Tuner.
func TunedOptions(m Model) map[string]string {
	if t, ok := m.(Tuner); ok {
		return t.TunedOptions()
	}
	return nil
}
