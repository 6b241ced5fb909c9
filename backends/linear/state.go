package linear

import (
	"context"

	"github.com/lazyvi/lazyvi/backends/internal/state"
	"github.com/lazyvi/lazyvi/framework"
)

// savedState is what Fit learned, for framework.Persister.
type savedState struct {
	Mu, SD, Theta, Cov []float64
	Alias              []bool
	Rank               int
	Sigma2, DF         float64
	Iter               int
	// Ridge is the penalty of the fit, and Auto says it was chosen by
	// cross-validation (option ridge auto): what FitReport and
	// TunedOptions say after a load.
	Ridge float64
	Auto  bool
}

const stateVersion = 1

var _ framework.Persister = (*Model)(nil)

// SaveState implements framework.Persister.
func (md *Model) SaveState(context.Context) ([]byte, error) {
	if !md.fitted {
		return nil, framework.Usagef("linear: save state: model is not fitted")
	}
	return state.Encode("linear", stateVersion, savedState{Mu: md.mu, SD: md.sd, Theta: md.theta, Cov: md.cov,
		Alias: md.alias, Rank: md.rank, Sigma2: md.sigma2, DF: md.df, Iter: md.iter, Ridge: md.cfg.ridge, Auto: md.cfg.auto})
}

// LoadState implements framework.Persister.
func (md *Model) LoadState(_ context.Context, b []byte) error {
	if md.fitted {
		return framework.Usagef("linear: load state: model is already fitted")
	}
	var s savedState
	if err := state.Decode("linear", stateVersion, b, &s); err != nil {
		return err
	}
	p := md.inputs
	for _, c := range []struct {
		what      string
		got, want int
	}{{"input means", len(s.Mu), p}, {"input scales", len(s.SD), p}, {"coefficients", len(s.Theta), p + 1},
		{"alias flags", len(s.Alias), p + 1}} {
		if err := state.CheckLen("linear", c.what, c.got, c.want); err != nil {
			return err
		}
	}
	// A fit with more parameters than rows has no covariance (fitOLSWide).
	if len(s.Cov) != 0 {
		if err := state.CheckLen("linear", "covariances", len(s.Cov), (p+1)*(p+1)); err != nil {
			return err
		}
	}
	md.mu, md.sd, md.theta, md.cov, md.alias = s.Mu, s.SD, s.Theta, s.Cov, s.Alias
	if len(s.Cov) == 0 {
		md.cov = nil
	}
	md.rank, md.sigma2, md.df, md.iter = s.Rank, s.Sigma2, s.DF, s.Iter
	if md.cfg.auto {
		// The penalty the training run chose; a fixed one is the
		// option's, which the run checked against the file.
		md.cfg.ridge = s.Ridge
	}
	md.fitted = true
	return nil
}
