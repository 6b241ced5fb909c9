package nn

import (
	"github.com/lazyvi/lazyvi/backends/internal/state"
	"github.com/lazyvi/lazyvi/framework"
)

// State is what a network's Fit learned, for framework.Persister: the
// head's response scaling, the parameters, the epochs and their losses,
// the fit report and the optimizer state that warm starts resume from.
type State struct {
	Mu, Sd float64
	Theta  []float64
	Epochs int
	Losses []float64
	Report framework.FitReport
	Adam   *AdamState
}

// stateVersion is the layout version of State.
const stateVersion = 1

// SaveState encodes a fitted network's state; name is the backend's.
func SaveState(name string, fitted bool, s State) ([]byte, error) {
	if !fitted {
		return nil, framework.Usagef("%s: save state: model is not fitted", name)
	}
	return state.Encode(name, stateVersion, s)
}

// LoadState decodes a state that SaveState wrote for an unfitted network
// of m parameters trained with learning rate lr, checking that it fits the
// architecture; adam is its optimizer state (nil when none was saved).
func LoadState(name string, fitted bool, b []byte, m int, lr float64) (s State, adam *Adam, err error) {
	if fitted {
		return s, nil, framework.Usagef("%s: load state: model is already fitted", name)
	}
	if err := state.Decode(name, stateVersion, b, &s); err != nil {
		return s, nil, err
	}
	if err := state.CheckLen(name, "parameters", len(s.Theta), m); err != nil {
		return s, nil, err
	}
	adam, ok := LoadAdam(lr, s.Adam, m)
	if !ok {
		return s, nil, framework.Usagef("%s: load state: the optimizer state does not fit the parameters", name)
	}
	return s, adam, nil
}
