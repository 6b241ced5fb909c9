package main

import (
	"context"
	"flag"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/internal/progress"
	"github.com/lazyvi/lazyvi/study/coverage"
)

// coverageBench is the study case of vi bench (study/coverage): the
// coverage, size and power of the inference candidates over repetitions
// of a setting with a known truth, the study of the inference options in
// docs/inference.md.
var coverageBench = &benchCase{
	Name:  "coverage",
	Short: "coverage, size and power of the inference candidates over repetitions of a setting with a known truth",
	Setup: func(fs *flag.FlagSet) func(context.Context, *app) error {
		f := &coverageFlags{}
		f.register(fs)
		return f.run
	},
}

// coverageFlags are the flags of vi bench coverage: the study's
// (coverage.Flags) and the output's.
type coverageFlags struct {
	study       coverage.Flags
	format, out string
}

func (f *coverageFlags) register(fs *flag.FlagSet) {
	f.study.Register(fs)
	fs.StringVar(&f.format, "format", "table", "output format: table or json")
	fs.StringVar(&f.out, "out", "", "write the output to `FILE` (atomically) instead of stdout")
}

// config checks the flags, the output's first, and returns the study they
// ask for.
func (f *coverageFlags) config(ctx context.Context) (coverage.Config, error) {
	if f.format != "table" && f.format != "json" {
		return coverage.Config{}, framework.Usagef("bench coverage: unknown --format %q (want table or json)", f.format)
	}
	if f.out != "" {
		if err := checkOutDir("--out", f.out); err != nil {
			return coverage.Config{}, err
		}
	}
	c, err := f.study.Config(ctx)
	if err != nil {
		return c, runError(ctx, err)
	}
	return c, nil
}

func (f *coverageFlags) run(ctx context.Context, a *app) error {
	c, err := f.config(ctx)
	if err != nil {
		return err
	}
	prog := progress.New(a.stderr, progress.Auto, "bench coverage")
	prog.SetUnit("data sets")
	defer prog.Close()
	c.Progress = prog.Update
	rep, err := coverage.Run(ctx, c)
	if err != nil {
		return err
	}
	prog.Clear()
	buf, err := render(f.format, rep, rep.WriteTable)
	if err != nil {
		return err
	}
	return a.emit(f.out, buf)
}
