package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"slices"

	"github.com/lazyvi/lazyvi/dataio"
)

// A RunID identifies a command's run for its checkpoint
// (dataio.OpenCheckpoint) and for the shards of one run
// (EstimateOptions.RunID): what its results depend on besides the
// program, each computed or read once.
type RunID struct {
	Command string             // the command's name
	Data    *dataio.Dataset    // the data
	Model   *dataio.SavedModel // the model file read; nil without one
	Flags   *flag.FlagSet      // the command's flags, parsed

	data string // Data's fingerprint, once computed
}

// Fingerprint hashes the command's name, the data's fingerprint
// (dataio.DataFingerprint, computed when first needed), the content of the
// model file (not its name: the SHA-256 of the whole file,
// dataio.SavedModel.FileSum, as read once) and the flags given except
// those in skip, in lexical order; a nil Data or Flags hashes as none.
// The model's line is "--model=SUM false": its last field is fixed, part
// of the format every checkpoint and shard is matched by.
func (id *RunID) Fingerprint(skip ...string) string {
	h := sha256.New()
	if id.data == "" && id.Data != nil {
		id.data = dataio.DataFingerprint(id.Data)
	}
	fmt.Fprintf(h, "%s\n%s\n", id.Command, id.data)
	if id.Flags == nil {
		return hex.EncodeToString(h.Sum(nil))
	}
	id.Flags.Visit(func(f *flag.Flag) {
		switch {
		case slices.Contains(skip, f.Name):
		case f.Name == "model" && id.Model != nil:
			// false: the file was read.
			fmt.Fprintf(h, "--model=%x %v\n", id.Model.FileSum, false)
		default:
			fmt.Fprintf(h, "--%s=%s\n", f.Name, f.Value)
		}
	})
	return hex.EncodeToString(h.Sum(nil))
}
