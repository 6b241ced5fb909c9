package pipeline

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
	"gonum.org/v1/gonum/mat"
)

// An explicit partition (Config.Partition) says which rows the models
// learn from and which rows judge them, instead of the seeded split or
// cross-fitting folds: label 0 is a row that only trains, label k in 1..K
// a row of evaluation fold k. One fold (K = 1) is an explicit
// train/evaluation split (evaluation data); K >= 2 folds a cross-fit the
// user defines, fold k's models trained on every row not in fold k.

// Partition labels of the split column (SplitPartition).
const (
	SplitTrain = "train"
	SplitEval  = "eval"
)

// WithEvalData joins a training and an evaluation data set into one, the
// rows of train first, and returns it with the partition (Config.Partition)
// that makes train's rows the train split and eval's the evaluation split:
// the full model and every reduced model learn from train only, and every
// score is on eval only. The two must have the same columns, in the same
// order; a difference is an *InputError naming eval's file and the column,
// and so are evaluation data with the training data's very rows.
// The joined data set's Source names both files.
func WithEvalData(train, eval *dataio.Dataset) (*dataio.Dataset, []int, error) {
	if train == nil || train.X == nil || eval == nil || eval.X == nil {
		return nil, nil, framework.Usagef("evaluation data: no data")
	}
	if err := sameColumns(train, eval); err != nil {
		return nil, nil, err
	}
	// The same rows (the same file, a link to it or a copy) would judge
	// every model on rows it learnt from: in-sample importances.
	if mat.Equal(train.X, eval.X) {
		return nil, nil, &dataio.InputError{File: eval.Source, Msg: fmt.Sprintf("the evaluation data are the training data (%s, the same rows): importances judged on the rows the models learnt from are in-sample; give rows held out from training", train.Source)}
	}
	n1, c := train.X.Dims()
	n2, _ := eval.X.Dims()
	x := mat.NewDense(n1+n2, c, nil)
	x.Slice(0, n1, 0, c).(*mat.Dense).Copy(train.X)
	x.Slice(n1, n1+n2, 0, c).(*mat.Dense).Copy(eval.X)
	part := make([]int, n1+n2)
	for i := n1; i < n1+n2; i++ {
		part[i] = 1
	}
	d := &dataio.Dataset{Source: train.Source + " and " + eval.Source, Names: slices.Clone(train.Names), X: x,
		Parts: []dataio.Part{{Source: train.Source, Start: 0}, {Source: eval.Source, Start: n1}}}
	return d, part, nil
}

// sameColumns reports, as an *InputError naming eval's file and the first
// column that differs, evaluation data whose columns are not train's.
func sameColumns(train, eval *dataio.Dataset) error {
	for j, name := range train.Names {
		if j >= len(eval.Names) {
			return &dataio.InputError{File: eval.Source, Column: name, Msg: fmt.Sprintf("no such column: the evaluation data needs the columns of %s (%d), in the same order; it has %d", train.Source, len(train.Names), len(eval.Names))}
		}
		if eval.Names[j] != name {
			return &dataio.InputError{File: eval.Source, Column: eval.Names[j], Msg: fmt.Sprintf("column %d is %s in %s: the evaluation data needs the same columns, in the same order", j+1, dataio.Quote(name), train.Source)}
		}
	}
	if len(eval.Names) > len(train.Names) {
		return &dataio.InputError{File: eval.Source, Column: eval.Names[len(train.Names)], Msg: fmt.Sprintf("not a column of %s: the evaluation data needs the same columns, in the same order", train.Source)}
	}
	return nil
}

// SplitPartition reads the values of a split column (one per row of the
// file source, in order) as a partition (Config.Partition): "train" and
// "eval" (any case) for one explicit split, or fold numbers 1..K (K >= 2,
// every one present) for a cross-fit the user defines, where "train" may
// mark rows that only train. A value that is none of these is an
// *InputError naming source, the row (the header is row 1) and column.
func SplitPartition(source, column string, values []string) ([]int, error) {
	part := make([]int, len(values))
	evals, folds := 0, 0
	firstFold := 0 // row of the first fold number, for the message on mixing
	bad := func(i int, msg string) error {
		return &dataio.InputError{File: source, Row: i + 2, Column: column, Msg: msg}
	}
	for i, v := range values {
		switch s := strings.TrimSpace(v); {
		case strings.EqualFold(s, SplitTrain):
		case strings.EqualFold(s, SplitEval):
			if folds > 0 {
				return nil, bad(i, fmt.Sprintf("%q after fold numbers (row %d): the split column holds train/eval or fold numbers 1..K, not both", s, firstFold+2))
			}
			part[i], evals = 1, evals+1
		default:
			k, err := strconv.Atoi(s)
			if err != nil || k < 1 {
				return nil, bad(i, fmt.Sprintf("%s is not a split: want train or eval, or a fold number 1, 2, ...", dataio.Quote(s)))
			}
			if k > len(values) {
				return nil, bad(i, fmt.Sprintf("fold number %s is more than the file's %d rows: fold numbers run 1..K, each on at least one row", s, len(values)))
			}
			if evals > 0 {
				return nil, bad(i, fmt.Sprintf("fold number %d after eval rows: the split column holds train/eval or fold numbers 1..K, not both", k))
			}
			if folds == 0 {
				firstFold = i
			}
			part[i], folds = k, folds+1
		}
	}
	if err := checkLabels(part); err != nil {
		return nil, &dataio.InputError{File: source, Column: column, Msg: err.Error()}
	}
	if k := slices.Max(part); k == 1 && folds > 0 {
		return nil, &dataio.InputError{File: source, Column: column, Msg: "every fold number is 1: cross-fitting needs folds 1..K with K >= 2 (write eval for the rows of one evaluation split)"}
	}
	return part, nil
}

// checkLabels checks a partition's labels: none negative, evaluation fold
// numbers 1..K each present, at least one row that trains in each fold.
func checkLabels(part []int) error {
	if len(part) == 0 {
		return fmt.Errorf("no rows")
	}
	k := slices.Max(part)
	if k < 1 {
		return fmt.Errorf("no evaluation rows (every row is %s)", SplitTrain)
	}
	// Every fold 1..K holds a row, so K above the rows is an error, found
	// before the counts are allocated.
	if k > len(part) {
		return fmt.Errorf("fold number %d is more than the %d rows: fold numbers run 1..K, each on at least one row", k, len(part))
	}
	count := make([]int, k+1)
	for i, v := range part {
		if v < 0 {
			return fmt.Errorf("row %d has label %d: labels are 0 (train) or fold numbers 1..K", i+1, v)
		}
		count[v]++
	}
	for f := 1; f <= k; f++ {
		if count[f] == 0 {
			return fmt.Errorf("fold %d has no rows: fold numbers must be 1..%d, each present", f, k)
		}
	}
	if k == 1 && count[0] == 0 {
		return fmt.Errorf("no training rows (every row is %s)", SplitEval)
	}
	return nil
}

// partitionFolds checks cfg.Partition against the data's n rows and
// cfg.CrossFit and returns its number of folds K (0 without a partition).
func partitionFolds(n int, cfg Config) (int, error) {
	if cfg.Partition == nil {
		return 0, nil
	}
	if len(cfg.Partition) != n {
		return 0, framework.FieldErrorf("Config.Partition", "has %d labels for %d rows", len(cfg.Partition), n)
	}
	if err := checkLabels(cfg.Partition); err != nil {
		return 0, framework.FieldErrorf("Config.Partition", "%v", err)
	}
	k := slices.Max(cfg.Partition)
	if cfg.CrossFit >= 2 && cfg.CrossFit != k || cfg.CrossFit < 0 {
		what := "one evaluation split"
		if k > 1 {
			what = fmt.Sprintf("%d folds", k)
		}
		return 0, framework.FieldErrorf("Config.CrossFit", "must be 0 or %d with Config.Partition, which gives %s, got %d", max(k, 1), what, cfg.CrossFit)
	}
	return k, nil
}

// withPartition returns cfg with CrossFit set to the folds of its
// partition (K >= 2), so that the rest of the run cross-fits them.
func withPartition(n int, cfg Config) (Config, error) {
	k, err := partitionFolds(n, cfg)
	if err != nil {
		return cfg, err
	}
	if k >= 2 {
		cfg.CrossFit = k
	}
	return cfg, nil
}

// partitionRows returns the train and evaluation rows of fold f (1..K) of
// the partition, each in the order of perm (the seeded order of the rows,
// so that a file sorted by some column reaches the backend shuffled as the
// seeded split's rows do).
func partitionRows(part, perm []int, f int) (train, eval []int) {
	for _, r := range perm {
		switch part[r] {
		case f:
			eval = append(eval, r)
		default:
			train = append(train, r)
		}
	}
	return train, eval
}

// Pretrained reports whether the run's full model is loaded, not trained:
// its options name a pre-trained network (PretrainedOption).
func (cfg Config) Pretrained() bool { return cfg.Options[PretrainedOption] != "" }

// ErrUnknownTraining marks the error of CheckRun for a pre-trained full
// model judged on rows it may have been trained on: no Config.Partition to
// hold rows out, and no Config.TrainedElsewhere to say that none of the
// data's rows trained it.
var ErrUnknownTraining = fmt.Errorf("pre-trained network without evaluation rows")

// checkPretrained refuses what a run with one loaded network cannot do:
// be judged on rows that may have trained it (no partition, unless
// TrainedElsewhere), be cross-fitted, or be repeated.
func checkPretrained(d *dataio.Dataset, cfg Config) error {
	if !cfg.Pretrained() {
		return nil
	}
	if cfg.Partition == nil && !cfg.TrainedElsewhere {
		return framework.Usagef("%s: %w: the full model is a pre-trained network (option %s) whose training rows are unknown, and judged on rows it may have been trained on, a network that fitted their noise makes null features look important; give rows it never saw as evaluation rows (Config.Partition), or set Config.TrainedElsewhere if none of these rows trained it",
			d.Source, ErrUnknownTraining, PretrainedOption)
	}
	if cfg.CrossFit >= 2 {
		return framework.FieldErrorf("Config.CrossFit", "must be 0 with a pre-trained network (option %s): one network cannot be cross-fitted, as it was not trained on each fold's other rows, got %d", PretrainedOption, cfg.CrossFit)
	}
	if cfg.Repeats > 1 {
		return framework.FieldErrorf("Config.Repeats", "must be 1 with a pre-trained network (option %s): every repetition would judge the same network, got %d", PretrainedOption, cfg.Repeats)
	}
	return nil
}

// PartitionSum identifies a partition for model files: "" for none (the
// seeded split or folds), else a SHA-256 (hex) of its labels.
func PartitionSum(part []int) string {
	if part == nil {
		return ""
	}
	h := sha256.New()
	var b [8]byte
	for _, v := range part {
		binary.LittleEndian.PutUint64(b[:], uint64(v))
		h.Write(b[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// checkSavedPartition reports a model file trained with another partition
// than cfg's (explicit evaluation rows or none), as an input error naming
// the model file.
func checkSavedPartition(s *dataio.SavedModel, cfg Config) error {
	got := PartitionSum(cfg.Partition)
	switch {
	case got == s.Partition:
		return nil
	case s.Partition == "":
		return &dataio.InputError{File: s.Source, Msg: "the model was trained on a seeded split of its data, not with explicit evaluation rows (evaluation data or a split column)"}
	case got == "":
		return &dataio.InputError{File: s.Source, Msg: "the model was trained with explicit evaluation rows (evaluation data or a split column); give the same"}
	}
	return &dataio.InputError{File: s.Source, Msg: "the model was trained with other explicit evaluation rows (evaluation data or a split column)"}
}

// partitionSplit is split for a partition of one fold: the sizes of its
// train and evaluation rows, or an error when they are too few.
func (sp *setup) partitionSplit() (n1, n2 int, err error) {
	for _, v := range sp.cfg.Partition {
		if v == 0 {
			n1++
		} else {
			n2++
		}
	}
	if n1 < sp.minTrain || n2 < 2 {
		return 0, 0, &dataio.InputError{File: sp.d.Source, Msg: fmt.Sprintf("too few rows: %d for training (need at least %d) and %d for evaluation (need at least 2)", n1, sp.minTrain, n2)}
	}
	return n1, n2, nil
}

// checkPartitionFolds is checkCrossFit for the partition's folds: k must
// be their number, each fold needs 2 evaluation rows and leaves the
// models minTrain rows to learn from.
func (sp *setup) checkPartitionFolds(k int) error {
	if k != sp.folds {
		return framework.FieldErrorf("Config.CrossFit", "must be 0 or %d with Config.Partition, which gives %d folds, got %d", sp.folds, sp.folds, k)
	}
	count := make([]int, k+1)
	for _, v := range sp.cfg.Partition {
		count[v]++
	}
	n := len(sp.cfg.Partition)
	for f := 1; f <= k; f++ {
		if count[f] < 2 || n-count[f] < sp.minTrain {
			return &dataio.InputError{File: sp.d.Source, Msg: fmt.Sprintf("fold %d has %d evaluation rows (need at least 2) and leaves %d for training (need at least %d)", f, count[f], n-count[f], sp.minTrain)}
		}
		if err := sp.checkWide(n - count[f]); err != nil {
			return err
		}
	}
	return nil
}

// checkEvalLabels refuses, for one explicit evaluation split (labels 0
// and 1), evaluation rows whose response is not a class of the training
// rows' when those are class labels (binary 0/1, or multiclass): one
// stray label (a 2 among 0/1, or 0.5) would otherwise turn the task
// inferred from all the rows into another (regression), silently. The
// error names the row's file, its row there and the column.
func checkEvalLabels(d *dataio.Dataset, target int, y []float64, part []int) error {
	if part == nil || slices.Max(part) != 1 || len(part) != len(y) {
		return nil
	}
	var train []float64
	for i, v := range y {
		if part[i] == 0 {
			train = append(train, v)
		}
	}
	if len(train) == 0 {
		return nil
	}
	task := InferTask(train)
	classes := "0 and 1"
	k := 2
	switch task {
	case framework.Regression:
		return nil
	case framework.Multiclass:
		k, _ = NumClasses(train)
		classes = fmt.Sprintf("0 to %d", k-1)
	}
	for i, v := range y {
		if part[i] == 1 && !(v >= 0 && v < float64(k) && v == math.Trunc(v)) {
			file, row := d.Locate(i)
			return &dataio.InputError{File: file, Row: row, Column: d.Names[target],
				Msg: fmt.Sprintf("response %v is not a class of the training rows (%s, a %s response): evaluation rows need the training rows' labels", v, classes, task)}
		}
	}
	return nil
}
