package main

import (
	"context"

	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
)

// reportFlags are the flags that vi estimate, shapley and roar share
// beyond the data's and the fit's: the figure, the model file and the
// groups.
type reportFlags struct {
	plot       string // --plot: the figure's file
	model      string // --model: a model file of vi train
	groups     string // --groups
	groupsFile string // --groups-file
}

// preflight is what the shared checks found: the flags given, the
// figure's format ("" without --plot) and the groups.
type preflight struct {
	set        map[string]bool
	plotFormat string
	groups     []dataio.Group
	onehot     bool
}

// preflight checks, before any data is read, what vi estimate, shapley
// and roar share: no positional arguments, the output and figure files,
// the fit's flags, that no output or other input file is the data, and
// the groups.
func (f *reportFlags) preflight(ctx context.Context, cmd *Command, args []string, data *dataFlags, fit *fitFlags) (*preflight, error) {
	if err := noArgs(cmd, args); err != nil {
		return nil, err
	}
	pf := &preflight{set: givenFlags(cmd)}
	if err := data.checkOutput(fileFlag{"--plot", f.plot}); err != nil {
		return nil, err
	}
	var err error
	if pf.plotFormat, err = checkPlot(f.plot, data.out); err != nil {
		return nil, err
	}
	if err := fit.check(); err != nil {
		return nil, err
	}
	if err := data.checkNotInput([]fileFlag{{"--plot", f.plot}}, fileFlag{"--groups-file", f.groupsFile}, fileFlag{"--model", f.model}); err != nil {
		return nil, err
	}
	if data.data == dataio.Stdin && f.groupsFile == dataio.Stdin {
		return nil, framework.Usagef("--data - and --groups-file - cannot both read standard input")
	}
	if pf.groups, pf.onehot, err = groupFlags(ctx, f.groups, f.groupsFile); err != nil {
		return nil, err
	}
	return pf, nil
}
