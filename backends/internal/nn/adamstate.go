package nn

// AdamState is the content of an optimizer state, for saving a fitted
// model (its warm starts resume from it, see Adam.Resumed).
type AdamState struct {
	M, V       []float64
	Pow1, Pow2 float64
}

// Save returns a copy of a's state; nil a gives nil.
func (a *Adam) Save() *AdamState {
	if a == nil {
		return nil
	}
	return &AdamState{M: append([]float64(nil), a.m...), V: append([]float64(nil), a.v...), Pow1: a.pow1, Pow2: a.pow2}
}

// LoadAdam returns the optimizer with learning rate lr and state s for n
// parameters; nil when s is nil. ok is false when s does not have n
// parameters.
func LoadAdam(lr float64, s *AdamState, n int) (a *Adam, ok bool) {
	if s == nil {
		return nil, true
	}
	if len(s.M) != n || len(s.V) != n {
		return nil, false
	}
	return &Adam{lr: lr, m: s.M, v: s.V, pow1: s.Pow1, pow2: s.Pow2}, true
}
