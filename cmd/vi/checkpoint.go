package main

import (
	"fmt"

	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/internal/atomicfile"
	"github.com/lazyvi/lazyvi/internal/progress"
	"github.com/lazyvi/lazyvi/pipeline"
)

// openCheckpoint opens OUT.partial, where a run writing to out keeps its
// finished reduced models so that the same command resumes after an
// interrupt or a crash (its fingerprint is checkpointID(id)); nil when the
// run writes to stdout or to what is not a file (/dev/null, a pipe: there
// is no result to resume, and /dev takes no files of ours).
func openCheckpoint(a *app, id *pipeline.RunID, out string, prog *progress.Meter) (*dataio.FileCheckpoint, error) {
	if out == "" {
		return nil, nil
	}
	if d, err := atomicfile.Resolve(out); err != nil || d.InPlace {
		return nil, nil
	}
	c, n, err := dataio.OpenCheckpoint(out+".partial", checkpointID(id))
	if err != nil {
		return nil, err
	}
	if v := c.StaleVersion(); v != 0 {
		prog.Clear()
		fmt.Fprintf(a.stderr, "vi: %s is a checkpoint of another vi's format (version %d): its reduced models are not reused, the run starts afresh\n", out+".partial", v)
	}
	if c.OtherRun() {
		prog.Clear()
		fmt.Fprintf(a.stderr, "vi: %s is a checkpoint of another run (other data, model or flags): its reduced models are not reused, the run starts afresh\n", out+".partial")
	}
	if n > 0 {
		prog.Clear()
		fmt.Fprintf(a.stderr, "vi: resuming from %s: %d reduced models already done\n", out+".partial", n)
	}
	return c, nil
}

// newRunID identifies cmd's run on d; model is the --model file read
// (readModelFile), or nil.
func newRunID(cmd *Command, d *dataio.Dataset, model *dataio.SavedModel) *pipeline.RunID {
	return &pipeline.RunID{Command: cmd.Name(), Data: d, Model: model, Flags: &cmd.Flag}
}

// checkpointID identifies what a run's reduced models depend on: the
// data, the model file's content and every flag given except those that
// only shape the output or the schedule. A checkpoint from a run with
// another fingerprint is not reused.
func checkpointID(id *pipeline.RunID) string {
	return id.Fingerprint("workers", "out", "format", "plot", "plugin-timeout", "backend-process", "level", "delta", "test", "adjust", "ci-truncate")
}

// mergeID identifies what every result of a run depends on, for the
// shards of one run (pipeline.ShardInfo.Run): the data, the model file's
// content, and every flag given except those that only shape the output
// or the schedule, or say which shard this is.
func mergeID(id *pipeline.RunID) string {
	return id.Fingerprint("workers", "out", "format", "plot", "plugin-timeout", "backend-process", "shard", "shard-count")
}
