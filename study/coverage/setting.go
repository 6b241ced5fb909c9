package coverage

import (
	"math"

	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/simulate"
)

// drawFunc is what one repetition draws: a data set and the truth per
// feature (NaN where unknown), under the measure named.
type drawFunc func(seed int64) (*dataio.Dataset, []float64, string, error)

// newDraw checks c's setting and returns what a repetition draws and the
// report's header.
func newDraw(c Config) (drawFunc, Report, error) {
	switch c.Setting {
	case "linear", "binary":
		n, rho := c.N, c.Rho
		if math.IsNaN(rho) {
			rho = simulate.DefaultRho(c.Setting)
		}
		if n == 0 {
			n = 2000
			if c.Setting == "binary" {
				n = 1000
			}
		}
		if _, err := simulate.Generate(c.Setting, 2, rho, 0); err != nil {
			return nil, Report{}, err
		}
		draw := func(seed int64) (*dataio.Dataset, []float64, string, error) {
			sim, err := simulate.Generate(c.Setting, n, rho, seed)
			if err != nil {
				return nil, nil, "", err
			}
			return &dataio.Dataset{Source: sim.Setting, Names: sim.Names, X: sim.X}, sim.Truth, sim.Measure, nil
		}
		return draw, Report{Setting: c.Setting, N: n, Rho: rho}, nil
	case "semi":
		if c.Data == nil {
			return nil, Report{}, framework.Usagef("coverage: the semi setting needs a data set")
		}
		s, err := newSemiSynthetic(c.Data, c.Target, c.Signal, c.Copy)
		if err != nil {
			return nil, Report{}, err
		}
		n, _ := c.Data.X.Dims()
		draw := func(seed int64) (*dataio.Dataset, []float64, string, error) {
			d, truth := s.draw(seed)
			return d, truth, "mse", nil
		}
		return draw, Report{Setting: c.Setting, Data: c.Data.Source, Signal: c.Signal, Copy: c.Copy, N: n}, nil
	}
	return nil, Report{}, framework.Usagef("coverage: the setting must be linear, binary or semi (a setting with a known truth), got %q", c.Setting)
}
