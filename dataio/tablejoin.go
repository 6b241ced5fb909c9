package dataio

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// JoinTables returns the rows of train followed by those of eval, as one
// table whose columns are train's: eval must have the same columns, in
// the same order. A column is Text when it is in either file; messages
// name eval's rows by its file. The caller knows which rows are whose
// (train's come first). Evaluation data with the training data's very
// cells are refused.
func JoinTables(train, eval *Table) (*Table, error) {
	for j, c := range train.Columns {
		if j >= len(eval.Columns) {
			return nil, &InputError{File: eval.Source, Column: c.Name, Msg: fmt.Sprintf("no such column: the evaluation data needs the columns of %s (%d), in the same order; it has %d", train.Source, len(train.Columns), len(eval.Columns))}
		}
		if eval.Columns[j].Name != c.Name {
			return nil, &InputError{File: eval.Source, Column: eval.Columns[j].Name, Msg: fmt.Sprintf("column %d is %s in %s: the evaluation data needs the same columns, in the same order", j+1, Quote(c.Name), train.Source)}
		}
	}
	if len(eval.Columns) > len(train.Columns) {
		return nil, &InputError{File: eval.Source, Column: eval.Columns[len(train.Columns)].Name, Msg: fmt.Sprintf("not a column of %s: the evaluation data needs the same columns, in the same order", train.Source)}
	}
	// The same rows (the same file, a link to it or a copy) would judge
	// every model on rows it learnt from: in-sample importances.
	if sameCells(train, eval) {
		return nil, &InputError{File: eval.Source, Msg: fmt.Sprintf("the evaluation data are the training data (%s, the same rows): importances judged on the rows the models learnt from are in-sample; give rows held out from training", train.Source)}
	}
	out := &Table{Source: train.Source + " and " + eval.Source, Rows: train.Rows + eval.Rows,
		parts: append(slices.Clone(train.partsOrOne()), eval.partsOrOne()...)}
	for j, a := range train.Columns {
		out.Columns = append(out.Columns, joinColumns(a, eval.Columns[j], train.Rows, eval.Rows))
	}
	return out, nil
}

// sameCells reports whether a and b hold the same cells (their columns
// are known to be the same).
func sameCells(a, b *Table) bool {
	if a.Rows != b.Rows {
		return false
	}
	for j, ca := range a.Columns {
		cb := b.Columns[j]
		for i := 0; i < a.Rows; i++ {
			sa, oka := ca.Category(i)
			sb, okb := cb.Category(i)
			if oka != okb || sa != sb {
				return false
			}
		}
	}
	return true
}

// partsOrOne is the table's parts, or one part of all its rows.
func (t *Table) partsOrOne() []tablePart {
	if len(t.parts) > 0 {
		return t.parts
	}
	return []tablePart{{t.Source, t.Rows, 2}}
}

// joinColumns joins a's na rows and b's nb rows into one column.
func joinColumns(a, b *TableColumn, na, nb int) *TableColumn {
	c := &TableColumn{Name: a.Name, Kind: a.Kind, BadCount: a.BadCount + b.BadCount, Refused: cmp.Or(a.Refused, b.Refused)}
	if a.Kind == Text || b.Kind == Text {
		c.Kind = Text
	}
	if a.Numbers != nil || b.Numbers != nil {
		c.Numbers = append(numbersOr(a, na), numbersOr(b, nb)...)
	}
	if a.Codes != nil || b.Codes != nil {
		c.Levels = slices.Clone(a.Levels)
		c.Codes = append(make([]int32, 0, na+nb), codesOr(a, na)...)
		index := map[string]int32{}
		for k, l := range c.Levels {
			index[l] = int32(k)
		}
		for _, code := range codesOr(b, nb) {
			if code < 0 {
				c.Codes = append(c.Codes, -1)
				continue
			}
			l := b.Levels[code]
			k, ok := index[l]
			if !ok {
				k = int32(len(c.Levels))
				c.Levels = append(c.Levels, l)
				index[l] = k
			}
			c.Codes = append(c.Codes, k)
		}
	}
	if c.Kind == Numeric {
		c.Bad = append(slices.Clone(a.Bad), b.Bad...)
		for i := len(a.Bad); i < len(c.Bad); i++ {
			c.Bad[i].Row += na
		}
		c.Bad = c.Bad[:min(len(c.Bad), maxBadCells)]
	} else {
		c.Bad, c.BadCount = nil, 0
	}
	return c
}

func numbersOr(c *TableColumn, n int) []float64 {
	if c.Numbers != nil {
		return c.Numbers
	}
	s := make([]float64, n)
	for i := range s {
		s[i] = math.NaN()
	}
	return s
}

func codesOr(c *TableColumn, n int) []int32 {
	if c.Codes != nil {
		return c.Codes
	}
	return minusOnes(n)[:n]
}

// Without returns the table without the named column, and that column;
// an unknown name is an *InputError naming it.
func (t *Table) Without(name string) (*Table, *TableColumn, error) {
	j := slices.IndexFunc(t.Columns, func(c *TableColumn) bool { return c.Name == name })
	if j < 0 {
		return nil, nil, &InputError{File: t.Source, Column: name, Msg: noSuchColumn(name, t.Names())}
	}
	out := *t
	out.Columns = append(slices.Clone(t.Columns[:j]), t.Columns[j+1:]...)
	return &out, t.Columns[j], nil
}
