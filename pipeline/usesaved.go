package pipeline

import (
	"strconv"

	"github.com/lazyvi/lazyvi/dataio"
)

// UseSaved makes cfg use the model file m: its seed, its split
// (TrainFrac, for a model of one split) and, in *crossfit, its
// cross-fitting folds where their flags were not given (set: the names of
// vi's flags given, "seed", "crossfit", "train-frac"), and refuses them
// given with other values (dataio.SavedModel.Conflict); then cfg.Saved is
// m.
func UseSaved(cfg *Config, crossfit *int, m *dataio.SavedModel, set map[string]bool) error {
	if !set["seed"] {
		cfg.Seed = m.Seed
	} else if cfg.Seed != m.Seed {
		return m.Conflict("seed", strconv.FormatInt(cfg.Seed, 10), strconv.FormatInt(m.Seed, 10))
	}
	if !set["crossfit"] {
		*crossfit = m.CrossFit
	} else if *crossfit != m.CrossFit {
		return m.Conflict("crossfit", strconv.Itoa(*crossfit), strconv.Itoa(m.CrossFit))
	}
	if m.CrossFit == 0 {
		if !set["train-frac"] {
			cfg.TrainFrac = m.TrainFrac
		} else if cfg.TrainFrac != m.TrainFrac {
			return m.Conflict("train-frac", strconv.FormatFloat(cfg.TrainFrac, 'g', -1, 64), strconv.FormatFloat(m.TrainFrac, 'g', -1, 64))
		}
	}
	cfg.Saved = m
	return nil
}
