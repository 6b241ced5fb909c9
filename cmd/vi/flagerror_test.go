package main

import (
	"errors"
	"flag"
	"fmt"
	"testing"

	"github.com/lazyvi/lazyvi/framework"
)

// The library's errors name its settings; vi's name the flags.
func TestFlagError(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("fold 2: %w", &framework.FieldError{Field: "Config.TrainFrac", Msg: "must be in (0, 1), got 1"}), "fold 2: --train-frac must be in (0, 1), got 1"},
		{&framework.FieldError{Field: "EstimateOptions.Level", Msg: "must be in (0, 1), got 2"}, "--level must be in (0, 1), got 2"},
		{&framework.FieldError{Field: "Config.Unknown", Msg: "is bad"}, "Config.Unknown is bad"},
		{errors.New("Config.TrainFrac in plain text"), "Config.TrainFrac in plain text"},
	} {
		if got := flagError(c.err); got != c.want {
			t.Errorf("flagError(%v) = %q, want %q", c.err, got, c.want)
		}
	}
	// Every setting that FieldError names in the library maps to a flag
	// that vi estimate, shapley or roar has.
	have := map[string]bool{}
	for _, c := range newCommands() {
		c.Flag.VisitAll(func(f *flag.Flag) { have["--"+f.Name] = true })
	}
	for field, name := range fieldFlags {
		if !have[name] {
			t.Errorf("%s maps to %s, which no command has", field, name)
		}
	}
}
