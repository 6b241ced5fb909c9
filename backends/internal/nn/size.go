package nn

import (
	"strconv"
	"strings"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/internal/sysmem"
)

// trainCopies is how many float64 values a network holds per parameter
// while it trains: the parameters, their gradient, Adam's two moments, the
// best epoch's parameters and the fitted model's.
const trainCopies = 6

// Size is what a network's training memory grows with: its parameters and
// the units (activations) of one row, forward and backward.
type Size struct {
	Params float64
	Units  float64
}

// DenseSize is the Size of dense layers of the given hidden widths and
// outs outputs on inputs inputs, counted in float64 so that no width
// overflows it.
func DenseSize(inputs float64, hidden []int, outs int) Size {
	var s Size
	in := inputs
	for _, out := range append(append([]int(nil), hidden...), outs) {
		s.Params += (in + 1) * float64(out)
		s.Units += float64(out)
		in = float64(out)
	}
	return s
}

// Bytes estimates the memory that training a network of size s on
// minibatches of batch rows takes.
func (s Size) Bytes(batch int) float64 {
	return 8 * (trainCopies*s.Params + 2*float64(batch)*s.Units)
}

// CheckSize refuses, as a usage error naming the backend and the option
// that sized the network (what, such as `option hidden "100,50"`), a
// network whose training would take more memory (Size.Bytes) than the
// machine has (MachineMemory), before any of it is allocated: an absurd
// width is the user's mistake, not an out-of-memory crash.
//
// Where the network would fit on minibatches of smallBatch rows and the
// batch asked for does not, the error names the batch instead: training
// caps the batch at the training rows, which are not known yet, so a batch
// that could not fit on any rows is refused as the batch's mistake.
func CheckSize(name, what string, s Size, batch int) error {
	need, have := s.Bytes(batch), MachineMemory()
	if need <= float64(have) {
		return nil
	}
	if batch > smallBatch && s.Bytes(smallBatch) <= float64(have) {
		return framework.Usagef("%s: option batch %d: minibatches of that many rows through %.3g units need about %.3g GB, more than this machine's %.3g GB of memory; use a smaller batch (at most the training rows: a batch of them all is full-batch training)",
			name, batch, s.Units, need/1e9, float64(have)/1e9)
	}
	return framework.Usagef("%s: %s: a network of %.3g parameters needs about %.3g GB to train, more than this machine's %.3g GB of memory; use smaller widths",
		name, what, s.Params, need/1e9, float64(have)/1e9)
}

// smallBatch is a minibatch size any network that CheckSize accepts can
// train on (the built-in backends' defaults are 32 and 64).
const smallBatch = 64

// MachineMemory returns the machine's physical memory in bytes (1 TiB
// where the system does not say).
func MachineMemory() uint64 { return sysmem.Total() }

// JoinWidths writes widths as the hidden option takes them: "100,50".
func JoinWidths(widths []int) string {
	s := make([]string, len(widths))
	for i, w := range widths {
		s[i] = strconv.Itoa(w)
	}
	return strings.Join(s, ",")
}
