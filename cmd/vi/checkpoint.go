package main

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"slices"

	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/internal/progress"
)

// openCheckpoint opens OUT.partial, where a run writing to out keeps its
// finished reduced models so that the same command resumes after an
// interrupt or a crash (its fingerprint is id.checkpoint()); nil when the
// run writes to stdout or to what is not a file (/dev/null, a pipe: there
// is no result to resume, and /dev takes no files of ours).
func openCheckpoint(a *app, id *runID, out string, prog *progress.Meter) (*dataio.FileCheckpoint, error) {
	if out == "" {
		return nil, nil
	}
	if fi, err := os.Stat(out); err == nil && !fi.Mode().IsRegular() {
		return nil, nil
	}
	c, n, err := dataio.OpenCheckpoint(out+".partial", id.checkpoint())
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

// runID is what a run's fingerprints hash besides its flags, each computed
// or read once: the data's fingerprint (dataio.DataFingerprint, computed
// when first needed) and the --model file's saved model (nil without
// --model).
type runID struct {
	cmd   *Command
	d     *dataio.Dataset
	data  string // d's fingerprint, once computed
	model *dataio.SavedModel
}

// newRunID identifies cmd's run on d; model is the --model file read
// (readModelFile), or nil.
func newRunID(cmd *Command, d *dataio.Dataset, model *dataio.SavedModel) *runID {
	return &runID{cmd: cmd, d: d, model: model}
}

// checkpoint identifies what a run's reduced models depend on: the data,
// the model file's content and every flag given except those that only
// shape the output or the schedule. A checkpoint from a run with another
// fingerprint is not reused.
func (id *runID) checkpoint() string {
	return id.fingerprint("workers", "out", "format", "plot", "plugin-timeout", "backend-process", "level", "delta", "test", "adjust", "ci-truncate")
}

// merge identifies what every result of a run depends on, for the shards
// of one run (pipeline.ShardInfo.Run): the data, the model file's content,
// and every flag given except those that only shape the output or the
// schedule, or say which shard this is.
func (id *runID) merge() string {
	return id.fingerprint("workers", "out", "format", "plot", "plugin-timeout", "backend-process", "shard", "shard-count")
}

// fingerprint hashes the command's name, the data's fingerprint, the
// content of the --model file (not its name: the SHA-256 of the whole file,
// dataio.SavedModel.FileSum, as read once) and the flags given except
// those in skip, in lexical order. The bytes hashed are those of earlier
// versions, which read the file again here, so that their checkpoints and
// shards still match.
func (id *runID) fingerprint(skip ...string) string {
	h := sha256.New()
	if id.data == "" {
		id.data = dataio.DataFingerprint(id.d)
	}
	fmt.Fprintf(h, "%s\n%s\n", id.cmd.Name(), id.data)
	id.cmd.Flag.Visit(func(f *flag.Flag) {
		switch {
		case slices.Contains(skip, f.Name):
		case f.Name == "model" && id.model != nil:
			// false: the file was read (earlier versions said whether
			// reading it again failed).
			fmt.Fprintf(h, "--model=%x %v\n", id.model.FileSum, false)
		default:
			fmt.Fprintf(h, "--%s=%s\n", f.Name, f.Value)
		}
	})
	return hex.EncodeToString(h.Sum(nil))
}
