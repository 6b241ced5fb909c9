package main

import (
	"context"
	"errors"
	"slices"

	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/pipeline"
)

// Explicit evaluation rows: --eval-data TEST.csv (the models learn from
// --data's rows only, every score is on TEST's) or --split-column COL
// (train/eval, or fold numbers 1..K for the user's own cross-fitting), and
// --trained-elsewhere, the user's word that a loaded network (--opt
// weights=) never saw --data's rows.

// checkEval checks the evaluation flags against each other and --data.
func (f *dataFlags) checkEval() error {
	switch {
	case f.evalData != "" && f.splitColumn != "":
		return framework.Usagef("--eval-data and --split-column exclude each other (each says which rows evaluate)")
	case (f.evalData != "" || f.splitColumn != "") && f.data == "":
		return framework.Usagef("--eval-data and --split-column need --data (the rows the models learn from)")
	case f.evalData == dataio.Stdin && f.data == dataio.Stdin:
		return framework.Usagef("--data - and --eval-data - cannot both read standard input")
	case f.splitColumn != "" && f.splitColumn == f.target:
		return framework.Usagef("--split-column %s is the --target: the split column says which rows evaluate, the response is another column", f.splitColumn)
	}
	return nil
}

// evalFlagsGiven says whether the flags give explicit evaluation rows.
func (f *dataFlags) evalFlagsGiven() bool { return f.evalData != "" || f.splitColumn != "" }

// loadEvalData reads the data of a run, CSV or Parquet, and prepares it
// as prep says (dataio.Table.Prepare: columns, categories, missing cells):
// path alone (nil partition), path with the evaluation rows of evalPath
// joined after its own (dataio.JoinTables, every label 1), or path with
// its split column read as the partition and left out
// (pipeline.SplitPartition). The partition has a label for each row kept.
// An input error in the response column is marked so (inResponse).
func loadEvalData(ctx context.Context, path, evalPath, split string, prep dataio.PrepareOptions) (*dataio.Dataset, []int, error) {
	d, part, target, err := readEvalData(ctx, path, evalPath, split, prep)
	return d, part, inResponse(err, target)
}

// readEvalData is loadEvalData without the response's mark on errors; it
// returns the response column's name (prep.Target or the file's last
// column besides the split column; "" when the file was not read).
func readEvalData(ctx context.Context, path, evalPath, split string, prep dataio.PrepareOptions) (*dataio.Dataset, []int, string, error) {
	t, err := dataio.LoadTable(ctx, path)
	if err != nil {
		return nil, nil, "", err
	}
	target := prep.Target
	for j := len(t.Columns) - 1; target == "" && j >= 0; j-- {
		if name := t.Columns[j].Name; name != split {
			target = name // the last column besides the split column
		}
	}
	d, part, err := prepareEvalData(ctx, t, evalPath, split, prep)
	return d, part, target, err
}

// prepareEvalData prepares table t (see loadEvalData).
func prepareEvalData(ctx context.Context, t *dataio.Table, evalPath, split string, prep dataio.PrepareOptions) (*dataio.Dataset, []int, error) {
	var err error
	var labels []string // each table row's label; nil: no partition
	switch {
	case split != "":
		var col *dataio.TableColumn
		if t, col, err = t.Without(split); err != nil {
			return nil, nil, err
		}
		if len(t.Columns) == 0 {
			return nil, nil, &dataio.InputError{File: t.Source, Column: split, Msg: "the file has no column besides it"}
		}
		labels = make([]string, t.Rows)
		for i := range labels {
			labels[i], _ = col.Category(i)
		}
		// Checked on every row of the file, so that a bad label is
		// named by its row in the file, whatever rows --missing drop
		// leaves out below.
		if _, err := pipeline.SplitPartition(t.Source, split, labels); err != nil {
			return nil, nil, err
		}
	case evalPath != "":
		eval, err := dataio.LoadTable(ctx, evalPath)
		if err != nil {
			return nil, nil, err
		}
		train := t.Rows
		if t, err = dataio.JoinTables(t, eval); err != nil {
			return nil, nil, err
		}
		labels = make([]string, t.Rows)
		for i := range labels {
			labels[i] = "train"
			if i >= train {
				labels[i] = "eval"
			}
		}
	}
	d, err := t.Prepare(prep)
	if err != nil || labels == nil {
		return d, nil, err
	}
	if d.Encoding != nil {
		kept := make([]string, len(d.Encoding.Rows))
		for i, r := range d.Encoding.Rows {
			kept[i] = labels[r]
		}
		labels = kept
	}
	if split == "" {
		part := make([]int, len(labels))
		for i, l := range labels {
			if l == "eval" {
				part[i] = 1
			}
		}
		return d, part, nil
	}
	part, err := pipeline.SplitPartition(d.Source, split, labels)
	var ie *dataio.InputError
	if errors.As(err, &ie) && ie.Row >= 2 && d.Encoding != nil && ie.Row-2 < len(d.Encoding.Rows) {
		ie.Row = d.Encoding.Rows[ie.Row-2] + 2 // the file's row, not the kept one's
	}
	if err != nil {
		return nil, nil, err
	}
	return d, part, nil
}

// checkLoaded refuses what a network loaded with --opt weights= cannot be
// used for, in terms of the flags: judged without rows held out from its
// training (unless --trained-elsewhere), or cross-fitted by a split
// column's fold numbers; and --trained-elsewhere without such a network.
func (r *dataRun) checkLoaded() error {
	loaded := r.opts[pipeline.PretrainedOption] != ""
	switch {
	case r.trainedElsewhere && !loaded:
		return framework.Usagef("--trained-elsewhere says where a loaded network (--opt %s=FILE) was trained; this run trains its own full model", pipeline.PretrainedOption)
	case loaded && r.partition == nil && !r.trainedElsewhere:
		return framework.Usagef("--opt %s= loads a network whose training rows vi does not know: judged on rows it may have been trained on, a network that fitted their noise makes null features look important; give rows it never saw with --eval-data FILE or --split-column COL, or --trained-elsewhere if none of --data's rows trained it", pipeline.PretrainedOption)
	case loaded && foldsOf(r.partition) >= 2:
		return framework.Usagef("--split-column %s has fold numbers, but one loaded network (--opt %s=) cannot be cross-fitted (it was not trained on each fold's other rows): mark its rows train or eval", r.split, pipeline.PretrainedOption)
	}
	return nil
}

// checkLoadedInference refuses, for vi estimate and vi train, the
// cross-fitting and repetitions that a loaded network (--opt weights=)
// cannot have, and the flags that choose a split besides explicit
// evaluation rows; crossfit and repeats are the flags' values, set the
// flags given, ensemble whether --ensemble is on.
func (f *dataFlags) checkLoadedInference(set map[string]bool, crossfit, repeats int, ensemble bool) error {
	w := pipeline.PretrainedOption
	switch loaded := f.opts[w] != ""; {
	case f.evalFlagsGiven() && set["crossfit"]:
		return framework.Usagef("--crossfit and --%s exclude each other: the evaluation rows are given (fold numbers in a --split-column make your own cross-fitting folds)", f.evalFlag())
	case f.evalFlagsGiven() && set["train-frac"]:
		return framework.Usagef("--train-frac and --%s exclude each other: the evaluation rows are given", f.evalFlag())
	case loaded && crossfit >= 2:
		return framework.Usagef("--crossfit %d and --opt %s= exclude each other: one loaded network cannot be cross-fitted (it was not trained on each fold's other rows)", crossfit, w)
	case loaded && repeats > 1:
		return framework.Usagef("--repeats %d and --opt %s= exclude each other: every repetition would judge the same loaded network", repeats, w)
	case loaded && set["ensemble"] && ensemble:
		return framework.Usagef("--ensemble and --opt %s= exclude each other: the ensemble averages the predictions of networks trained with other seeds, and one loaded network is judged once", w)
	}
	return nil
}

// evalFlag names the evaluation flag given.
func (f *dataFlags) evalFlag() string { return evalFlagName(f.evalData) }

// evalFlagName names the evaluation flag of a run whose --eval-data is
// evalData: eval-data when given, else split-column.
func evalFlagName(evalData string) string {
	if evalData != "" {
		return "eval-data"
	}
	return "split-column"
}

// foldsOf returns the evaluation folds of a partition: 1 for one
// explicit split, K for a split column's fold numbers, 0 for none.
func foldsOf(part []int) int {
	if len(part) == 0 {
		return 0
	}
	return slices.Max(part)
}
