package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/pipeline"
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
	ests, err := pipeline.LookupEstimators(list)
	if err != nil {
		return nil, err
	}
	return pipeline.ConfigureEstimators(ests, s.given())
}

// settingValue is a setting's flag: its string, checked by the estimators.
type settingValue string

func (v *settingValue) String() string     { return string(*v) }
func (v *settingValue) Set(s string) error { *v = settingValue(strings.TrimSpace(s)); return nil }

func rows(d *dataio.Dataset) int {
	r, _ := d.X.Dims()
	return r
}
