package lazy

// config holds the constants of lazy at scale that the package's
// benchmarks vary to compare alternatives; the zero config is lazy's own,
// each field's default used where it is zero.
type config struct {
	// subsampleRows is the number of train rows the penalty is chosen on
	// at scale (defaultSubsampleRows).
	subsampleRows int
	// subsampleTol is the penalty search's tolerance at scale, in decades
	// (defaultSubsampleTol).
	subsampleTol float64
	// precondWhen is the least ratio of a feature's penalty to the
	// baseline's at which the feature's solve is preconditioned by the
	// baseline's Ritz pairs (defaultPrecondWhen; +Inf: never).
	precondWhen float64
	// carryMaxValues bounds a baseline's Carry in values
	// (defaultCarryMaxValues).
	carryMaxValues int
	// noSketch solves without the subsample's preconditioner (sketch.go).
	noSketch bool
	// solveTol is the final solve's tolerance (finalEnergyTol).
	solveTol float64
}

// defaultSubsampleRows is the number of train rows the penalty is chosen
// on at scale: enough that the penalty chosen moves the VIs of null
// features by a small fraction of their standard errors, where half as
// many rows, or two folds instead of three, move them by standard errors.
const defaultSubsampleRows = 1000

// defaultSubsampleTol is the search's tolerance on the subsample and on
// held-out rows, in decades of the penalty: coarser than the dense path's
// searchTol (0.05), since the subsample's own penalty varies by more from
// one subsample size to another and the CV error is flat near its minimum:
// the VIs move by a small fraction of their standard errors, for less
// search (BenchmarkScaleSearchVariants).
const defaultSubsampleTol = 0.15

// defaultPrecondWhen: a feature whose penalty is at least half the
// baseline's solves preconditioned by the baseline's Ritz pairs (see
// precond.go for why below it they do not pay).
const defaultPrecondWhen = 0.5

// defaultCarryMaxValues bounds a Carry's Ritz vectors in values: 64 MiB a
// fold, 576 MiB for the nine folds of the default 3x3 cross-fit, and a
// checkpoint line of about 180 MB, well inside the 1 GiB that
// OpenCheckpoint reads a line up to. A network of M parameters carries at
// most defaultCarryMaxValues / M pairs (32 pairs up to 262144 parameters,
// none above 8 M).
const defaultCarryMaxValues = 1 << 23

func (c config) rows() int             { return orDefault(c.subsampleRows, defaultSubsampleRows) }
func (c config) tol() float64          { return orDefault(c.subsampleTol, defaultSubsampleTol) }
func (c config) precondRatio() float64 { return orDefault(c.precondWhen, defaultPrecondWhen) }
func (c config) carryValues() int      { return orDefault(c.carryMaxValues, defaultCarryMaxValues) }
func (c config) energyTol() float64    { return orDefault(c.solveTol, finalEnergyTol) }

// orDefault is v when it is positive, else def.
func orDefault[T int | float64](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}

// subsampleSize is the number of rows of the subsample for n1 train rows
// with k outputs each: the dense cross-validation's kernel has ns k rows.
func (c config) subsampleSize(n1, k int) int { return min(n1, c.rows(), maxRidgeDim/k) }

// heldOut reports whether the output count k caps the subsample of n1
// train rows below min(n1, the subsample's rows), so that the penalty is
// chosen on all of them (heldout.go).
func (c config) heldOut(n1, k int) bool { return c.subsampleSize(n1, k) < min(n1, c.rows()) }
