package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"

	"github.com/lazyvi/lazyvi/framework"
)

// openCheckpoint opens OUT.partial, where a run writing to out keeps its
// finished reduced models so that the same command resumes after an
// interrupt or a crash; nil when the run writes to stdout.
func openCheckpoint(a *app, cmd *Command, d *framework.Dataset, out string, prog *progress) (*framework.FileCheckpoint, error) {
	if out == "" {
		return nil, nil
	}
	c, n, err := framework.OpenCheckpoint(out+".partial", runFingerprint(cmd, d))
	if err != nil {
		return nil, err
	}
	if n > 0 {
		prog.clear()
		fmt.Fprintf(a.stderr, "vi: resuming from %s: %d reduced models already done\n", out+".partial", n)
	}
	return c, nil
}

// finishCheckpoint ends a checkpoint's run: after a failure that a resume
// can get past (an interrupt, a backend that died) it keeps the file when
// it holds anything and says so in the (one-line) error; after a success,
// after a failure that the same command would meet again (bad input or
// flags, a non-finite result), and when there is nothing to keep, it
// removes the file.
func finishCheckpoint(c *framework.FileCheckpoint, out string, runErr error) error {
	if c == nil {
		return runErr
	}
	if runErr != nil {
		if n := c.Len(); n > 0 && resumable(runErr) {
			c.Close()
			return fmt.Errorf("%w (%d finished reduced models are kept in %s: the same command resumes from them)", runErr, n, out+".partial")
		}
		c.Remove()
		return runErr
	}
	return c.Remove()
}

// runFingerprint identifies what a run's reduced models depend on: the data,
// the model file's content and every flag given except those that only
// shape the output or the schedule. A checkpoint from a run with another
// fingerprint is not reused.
func runFingerprint(cmd *Command, d *framework.Dataset) string {
	return fingerprint(cmd, d, "workers", "out", "format", "plot", "plugin-timeout", "level", "delta", "adjust", "ci-truncate")
}

// mergeFingerprint identifies what every result of a run depends on, for
// the shards of one run (framework.ShardInfo.Run): the data, the model
// file's content, and every flag given except those that only shape the
// output or the schedule, or say which shard this is.
func mergeFingerprint(cmd *Command, d *framework.Dataset) string {
	return fingerprint(cmd, d, "workers", "out", "format", "plot", "plugin-timeout", "shard", "shard-count")
}

// fingerprint hashes the command's name, the data (framework.
// DataFingerprint), the content of the --model file (not its name) and the
// flags given except those in skip, in lexical order.
func fingerprint(cmd *Command, d *framework.Dataset, skip ...string) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n", cmd.Name(), framework.DataFingerprint(d))
	cmd.Flag.Visit(func(f *flag.Flag) {
		switch {
		case slices.Contains(skip, f.Name):
		case f.Name == "model":
			b, err := os.ReadFile(f.Value.String())
			fmt.Fprintf(h, "--model=%x %v\n", sha256.Sum256(b), err != nil)
		default:
			fmt.Fprintf(h, "--%s=%s\n", f.Name, f.Value)
		}
	})
	return hex.EncodeToString(h.Sum(nil))
}

// resumable reports whether running the same command again, from the
// checkpoint, could succeed where err failed: not for bad input or flags
// and not for a non-finite result, which come back the same.
func resumable(err error) bool {
	return !errors.Is(err, framework.ErrUsage) && !errors.Is(err, framework.ErrNonFinite)
}
