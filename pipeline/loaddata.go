package pipeline

import (
	"context"
	"errors"
	"slices"

	"github.com/lazyvi/lazyvi/dataio"
)

// LoadData reads the data of a run, CSV or Parquet, and prepares it as
// prep says (dataio.Table.Prepare: columns, categories, missing cells),
// with the evaluation rows a run may be given explicitly:
//
//   - path alone: a nil partition (Config.Partition), a seeded split;
//   - evalPath: its rows, with path's columns, joined after path's own
//     (dataio.JoinTables), every model learning from path's rows only and
//     every score on evalPath's (label 1);
//   - split: path's column of that name read as the partition
//     (SplitPartition: train/eval, or fold numbers 1..K) and left out.
//
// The partition has a label for each row kept. It also returns the
// response column's name: prep.Target, or the file's last column besides
// the split column ("" when the file was not read).
func LoadData(ctx context.Context, path, evalPath, split string, prep dataio.PrepareOptions) (*dataio.Dataset, []int, string, error) {
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
	d, part, err := prepareData(ctx, t, evalPath, split, prep)
	return d, part, target, err
}

// prepareData prepares table t (see LoadData).
func prepareData(ctx context.Context, t *dataio.Table, evalPath, split string, prep dataio.PrepareOptions) (*dataio.Dataset, []int, error) {
	labels, t, err := rowLabels(ctx, t, evalPath, split)
	if err != nil {
		return nil, nil, err
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
	part, err := SplitPartition(d.Source, split, labels)
	var ie *dataio.InputError
	if errors.As(err, &ie) && ie.Row >= 2 && d.Encoding != nil && ie.Row-2 < len(d.Encoding.Rows) {
		ie.Row = d.Encoding.Rows[ie.Row-2] + 2 // the file's row, not the kept one's
	}
	if err != nil {
		return nil, nil, err
	}
	return d, part, nil
}

// rowLabels returns each row's label (train, eval, or a fold number; nil
// for no partition) and the table to prepare: t without its split column,
// or t with evalPath's rows joined after its own.
func rowLabels(ctx context.Context, t *dataio.Table, evalPath, split string) ([]string, *dataio.Table, error) {
	var labels []string
	switch {
	case split != "":
		t, col, err := t.Without(split)
		if err != nil {
			return nil, nil, err
		}
		if len(t.Columns) == 0 {
			return nil, nil, &dataio.InputError{File: t.Source, Column: split, Msg: "the file has no column besides it"}
		}
		labels = make([]string, t.Rows)
		for i := range labels {
			labels[i], _ = col.Category(i)
		}
		// Checked on every row of the file, so that a bad label is named
		// by its row in the file, whatever rows --missing drop leaves out.
		if _, err := SplitPartition(t.Source, split, labels); err != nil {
			return nil, nil, err
		}
		return labels, t, nil
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
	return labels, t, nil
}

// Folds returns the evaluation folds of a partition (Config.Partition):
// 1 for one explicit split, K for fold numbers 1..K, 0 for none.
func Folds(part []int) int {
	if len(part) == 0 {
		return 0
	}
	return slices.Max(part)
}
