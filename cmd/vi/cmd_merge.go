package main

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/pipeline"
	"github.com/lazyvi/lazyvi/report"
)

// mergeOptions are the flags of vi merge.
type mergeOptions struct {
	format, out string
}

func newMergeCommand() *Command {
	var o mergeOptions
	cmd := &Command{
		UsageLine: "merge [--format FORMAT] [--out FILE] SHARD.json...",
		Short:     "combine the shards of a run (vi estimate --shard) into its report",
		Long: `Merge reads the JSON reports of the shards of one run (vi estimate --shard
K/N --format json, one per shard, in any order) and writes the report of the
whole run: exactly what one vi estimate without --shard would have written,
timings aside, with the p-values adjusted over all the features as the
shards' own adjustment says (vi estimate's --adjust, one for all shards).

It refuses, with exit code 2, shards of different runs (other data, model
file or settings), two files of the same shard, a report without --shard,
a shard index outside its count, a result without its vi, se or p_value or
with a p-value outside [0, 1], and missing shards, naming the features they
should have held.`,
	}
	cmd.Flag.StringVar(&o.format, "format", "json", "output `format`: table, csv or json")
	cmd.Flag.StringVar(&o.out, "out", "", "write the report to `file` (atomically) instead of stdout")
	cmd.Run = func(ctx context.Context, a *app, args []string) error { return o.run(ctx, a, args) }
	return cmd
}

func (o *mergeOptions) run(ctx context.Context, a *app, args []string) error {
	if !slices.Contains(report.Formats, o.format) {
		return framework.Usagef("unknown --format %q (want table, csv or json)", o.format)
	}
	if len(args) == 0 {
		return framework.Usagef("merge: name the shards' JSON reports (vi merge shard-*.json)")
	}
	if o.out != "" {
		if err := checkOutDir("--out", o.out); err != nil {
			return err
		}
		ins := make([]fileFlag, len(args))
		for i, in := range args {
			ins[i] = fileFlag{"shard", in}
		}
		if err := checkNotInput([]fileFlag{{"--out", o.out}}, ins); err != nil {
			return err
		}
	}
	var reports []pipeline.NamedReport
	for _, path := range args {
		r, err := pipeline.LoadShardReport(ctx, path)
		if err != nil {
			return runError(ctx, err)
		}
		reports = append(reports, pipeline.NamedReport{Name: path, Report: r})
	}
	merged, err := pipeline.MergeReports(reports)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := report.Write(&buf, merged, o.format); err != nil {
		return err
	}
	feats := map[string]bool{}
	for _, r := range merged.Results {
		feats[r.Feature] = true
	}
	return a.emitAs(o.out, fmt.Sprintf("the report of %d shards, %d features", len(args), len(feats)), &buf)
}
