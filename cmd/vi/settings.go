package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
)

// settingFlags are the flags of the estimators' settings: one per setting
// of the registered estimators that are framework.Configurers (lazy's
// --folds and --lambda, lazy-es's --es-steps), named, described and
// defaulted by the estimators, so that a new estimator's settings become
// flags of every estimating command without a change here.
type settingFlags struct {
	fs    *flag.FlagSet
	names map[string]bool
}

// newSettingFlags declares the settings' flags on fs; a setting that
// several estimators share (same name) is one flag, described by the first
// estimator in name order.
func newSettingFlags(fs *flag.FlagSet) *settingFlags {
	s := &settingFlags{fs: fs, names: map[string]bool{}}
	for _, name := range framework.Estimators() {
		e, err := framework.LookupEstimator(name)
		if err != nil {
			continue
		}
		c, ok := e.(framework.Configurer)
		if !ok {
			continue
		}
		for _, o := range c.Settings() {
			if s.names[o.Name] {
				continue
			}
			s.names[o.Name] = true
			v := settingValue(o.Default)
			fs.Var(&v, o.Name, o.Usage)
		}
	}
	return s
}

// given returns the settings given on the command line.
func (s *settingFlags) given() map[string]string {
	out := map[string]string{}
	s.fs.Visit(func(f *flag.Flag) {
		if s.names[f.Name] {
			out[f.Name] = f.Value.String()
		}
	})
	return out
}

// check checks every given setting's value with every registered estimator
// that has it, so that a bad value is an error whichever estimators run.
func (s *settingFlags) check() error {
	given := s.given()
	for _, name := range framework.Estimators() {
		e, err := framework.LookupEstimator(name)
		if err != nil {
			return err
		}
		for k, v := range given {
			if _, err := framework.Configure(e, map[string]string{k: v}); err != nil {
				return fmt.Errorf("--%w", err)
			}
		}
	}
	return nil
}

// lookup resolves a comma-separated list of estimator names and configures
// each with the settings given.
func (s *settingFlags) lookup(list string) ([]framework.Estimator, error) {
	ests, err := lookupEstimators(list)
	if err != nil {
		return nil, err
	}
	return configure(ests, s.given())
}

// configure applies settings to the estimators that have them.
func configure(ests []framework.Estimator, settings map[string]string) ([]framework.Estimator, error) {
	out := make([]framework.Estimator, len(ests))
	for i, e := range ests {
		c, err := framework.Configure(e, settings)
		if err != nil {
			return nil, fmt.Errorf("--%w", err)
		}
		out[i] = c
	}
	return out, nil
}

// settingValue is a setting's flag: its string, checked by the estimators.
type settingValue string

func (v *settingValue) String() string     { return string(*v) }
func (v *settingValue) Set(s string) error { *v = settingValue(strings.TrimSpace(s)); return nil }

// fitsList returns the estimators among ests that run on a backend with
// caps, and what each of the others lacks.
func fitsList(ests []framework.Estimator, caps framework.Capabilities) (fit []framework.Estimator, lacking map[string][]string) {
	lacking = map[string][]string{}
	for _, e := range ests {
		if ok, missing := caps.Runs(e); ok {
			fit = append(fit, e)
		} else {
			lacking[e.Name()] = missing
		}
	}
	return fit, lacking
}

func rows(d *dataio.Dataset) int {
	r, _ := d.X.Dims()
	return r
}

// lookupEstimators resolves a comma-separated list of estimator names.
func lookupEstimators(list string) ([]framework.Estimator, error) {
	var out []framework.Estimator
	seen := map[string]bool{}
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if seen[name] {
			return nil, framework.Usagef("--estimators: %q given twice", name)
		}
		seen[name] = true
		e, err := framework.LookupEstimator(name)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	if len(out) == 0 {
		return nil, framework.Usagef("--estimators is empty (registered: %s)", strings.Join(framework.Estimators(), ", "))
	}
	return out, nil
}

func estimatorNames(ests []framework.Estimator) []string {
	out := make([]string, len(ests))
	for i, e := range ests {
		out[i] = e.Name()
	}
	return out
}
