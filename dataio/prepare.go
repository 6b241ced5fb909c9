package dataio

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/lazyvi/lazyvi/framework"
	"gonum.org/v1/gonum/mat"
)

// MissingPolicy says what Prepare does with missing cells.
type MissingPolicy string

const (
	// MissingError (the default, also "") refuses data with missing
	// cells, counting them per column.
	MissingError MissingPolicy = "error"
	// MissingDrop leaves out every row with a missing cell in a column
	// that the run uses.
	MissingDrop MissingPolicy = "drop"
	// MissingImpute keeps every row: a missing feature cell is filled, on
	// each set of training rows, with their mean (a numeric column) or
	// most frequent category (a categorical one), and a missingness
	// indicator column joins the column's group. A missing response is
	// refused.
	MissingImpute MissingPolicy = "impute"
)

// ParseMissing parses a MissingPolicy: error, drop or impute.
func ParseMissing(s string) (MissingPolicy, error) {
	switch p := MissingPolicy(strings.ToLower(strings.TrimSpace(s))); p {
	case "", MissingError:
		return MissingError, nil
	case MissingDrop, MissingImpute:
		return p, nil
	}
	return "", framework.Usagef("unknown missing-value policy %q (want error, drop or impute)", s)
}

// PrepareOptions say how Prepare turns a Table into a Dataset. A model
// file records them (SavedModel.Prepare), so that a run with the model
// prepares the data the same way.
type PrepareOptions struct {
	// Target is the response column; "" means the last column.
	Target string `json:"target,omitempty"`
	// Features are the feature columns, names or glob patterns
	// (path.Match: age*, x[0-9]); none means every column but the target.
	// Drop leaves columns out (an ID column), names or patterns too.
	Features []string `json:"features,omitempty"`
	Drop     []string `json:"drop,omitempty"`
	// Categorical names numeric columns to treat as categories (integer
	// codes); text columns are categorical anyway.
	Categorical []string      `json:"categorical,omitempty"`
	Missing     MissingPolicy `json:"missing,omitempty"`
}

// An Encoding says how a Dataset's columns came from its file's: one
// EncodedColumn per feature column of the file. Categorical columns are
// one-hot encoded, one indicator column per category ("zone=north"),
// a column with imputed cells has a missingness indicator ("age:missing")
// and holds NaN in the cells to impute, which FitFill fits on each set of
// training rows.
type Encoding struct {
	Options PrepareOptions
	Columns []EncodedColumn
	// Rows are the table's rows (0-based) that the data set's rows are,
	// in order: every row, less those MissingDrop left out.
	Rows []int
}

// An EncodedColumn is one feature column of the file and the Dataset
// columns it became: its value (numeric) or one indicator per category
// (categorical, Levels in the order of the indicators), then its
// missingness indicator (Missing, "" for none).
type EncodedColumn struct {
	Name    string
	Columns []string
	Levels  []string
	Missing string
}

// Categorical reports whether the column is one-hot encoded.
func (c EncodedColumn) Categorical() bool { return c.Levels != nil }

// Units returns the data set's feature columns grouped by the file's
// columns they came from (one group per categorical or imputed column,
// named as the file's column), or nil for a data set without an
// Encoding: the units whose importance a run reports (ResolveUnits).
func (d *Dataset) Units() []Group {
	if d.Encoding == nil {
		return nil
	}
	out := make([]Group, len(d.Encoding.Columns))
	for k, c := range d.Encoding.Columns {
		out[k] = Group{Name: c.Name, Columns: c.Columns}
	}
	return out
}

// maxLevelShare and minIDLevels say when a categorical column looks like
// an identifier: more than minIDLevels categories, more than maxLevelShare
// of them per row.
const (
	maxLevelShare = 0.5
	minIDLevels   = 20
)

// Prepare turns a table into the numeric data set that models learn from,
// as opt says: it selects the columns, checks every cell, one-hot encodes
// the categorical columns (text ones, and those opt.Categorical names)
// and treats missing cells by opt.Missing. Every problem of one kind is
// reported at once, as one *InputError: every name or pattern that
// matches no column, every column with bad cells (the first few of each),
// every column with missing cells (and how many). The categories are
// those of the rows kept, numbers in increasing order then words in
// byte order; a category that the training rows of a fit lack gets all
// its column's indicators 0 (see FitFill). A table of numbers without
// missing cells, prepared with the zero options, is the data set ReadCSV
// reads, without an Encoding.
func (t *Table) Prepare(opt PrepareOptions) (*Dataset, error) {
	if t == nil || len(t.Columns) == 0 {
		return nil, framework.Usagef("no data")
	}
	policy, err := ParseMissing(string(opt.Missing))
	if err != nil {
		return nil, err
	}
	opt.Missing = policy
	names := t.Names()
	target := len(names) - 1
	if opt.Target != "" {
		if target = slices.Index(names, opt.Target); target < 0 {
			return nil, &InputError{File: t.Source, Column: opt.Target, Msg: noSuchColumn(opt.Target, names)}
		}
	}
	keep, err := selectColumns(t.Source, names, target, opt.Features, opt.Drop)
	if err != nil {
		return nil, err
	}
	if err := t.checkRefused(keep, target); err != nil {
		return nil, err
	}
	cat, err := t.categorical(opt.Categorical, keep, target)
	if err != nil {
		return nil, err
	}
	if err := t.checkCells(keep, cat, target); err != nil {
		return nil, err
	}
	rows, err := t.keptRows(keep, target, policy)
	if err != nil {
		return nil, err
	}
	return t.encode(opt, keep, cat, target, rows)
}

// categorical returns which columns are one-hot encoded: the kept text
// columns and those that names names. A name that is no kept feature
// column is an error (all of them in one).
func (t *Table) categorical(names []string, keep []bool, target int) ([]bool, error) {
	cat := make([]bool, len(t.Columns))
	for j, c := range t.Columns {
		cat[j] = keep[j] && c.Kind == Text
	}
	all := t.Names()
	var bad []string
	for _, n := range names {
		j := slices.Index(all, n)
		switch {
		case j < 0:
			bad = append(bad, fmt.Sprintf("categorical: %s", noColumn(n, all)))
		case j == target:
			bad = append(bad, fmt.Sprintf("categorical: %s is the response (code its classes 0, 1, ...; it is not a feature)", Quote(n)))
		case !keep[j]:
			bad = append(bad, fmt.Sprintf("categorical: %s is not a feature of the run (left out by the column selection)", Quote(n)))
		default:
			cat[j] = true
		}
	}
	if len(bad) > 0 {
		return nil, &InputError{File: t.Source, Msg: strings.Join(bad, "; ")}
	}
	return cat, nil
}

// checkRefused refuses a column that cannot be read (TableColumn.Refused)
// where the run uses it: as a feature, or as the response.
func (t *Table) checkRefused(keep []bool, target int) error {
	for j, c := range t.Columns {
		if c.Refused == "" || !keep[j] && j != target {
			continue
		}
		leave := fmt.Sprintf("leave it out (--drop %s)", c.Name)
		if j == target {
			leave = "name another response (--target)"
		}
		return &InputError{File: t.Source, Column: c.Name, Msg: c.Refused + "; or " + leave}
	}
	return nil
}

// noColumn is "no column X (did you mean Y?)".
func noColumn(name string, names []string) string {
	msg := noSuchColumn(name, names)
	return "no column " + Quote(name) + strings.TrimPrefix(msg, "no such column")
}

// checkCells reports, in one error, every kept numeric column with bad
// cells (the first few of each), a text response, and a categorical
// column with about as many categories as rows (an identifier).
func (t *Table) checkCells(keep, cat []bool, target int) error {
	var bad []string
	var single *InputError // the only bad cell, when there is one
	for j, c := range t.Columns {
		switch {
		case j == target && c.Kind == Text:
			return t.textResponse(c)
		case (keep[j] && !cat[j] || j == target) && c.BadCount > 0:
			bad = append(bad, fmt.Sprintf("%s: %d %s not a number (%s)", Quote(c.Name), c.BadCount, plural(c.BadCount, "cell is", "cells are"), t.badCells(c.Bad, c.BadCount)))
			file, row := t.locate(c.Bad[0].Row)
			single = &InputError{File: file, Row: row, Column: c.Name, Err: ErrText,
				Msg: c.Bad[0].Msg + "; correct it, or, if the column holds categories, name it categorical (--categorical)"}
		}
	}
	if len(bad) == 1 && single != nil && strings.Contains(bad[0], ": 1 cell is") {
		return single
	}
	if len(bad) > 0 {
		return &InputError{File: t.Source, Err: ErrText, Msg: fmt.Sprintf("%d %s cells that are not numbers in columns of numbers: %s; correct them, or, for a column of categories, name it categorical (--categorical)",
			len(bad), plural(len(bad), "column has", "columns have"), joinWithin(bad, "; ", maxListLen))}
	}
	for j, c := range t.Columns {
		if !cat[j] {
			continue
		}
		if n := len(categories(c, t.Rows, nil)); n > minIDLevels && float64(n) > maxLevelShare*float64(t.Rows) {
			return &InputError{File: t.Source, Column: c.Name, Msg: fmt.Sprintf("%d categories in %d rows: an identifier rather than a feature? leave it out (--drop %s)", n, t.Rows, c.Name)}
		}
	}
	return nil
}

// rowList names rows (0-based) in a message: "rows 5, 9, 30", or each
// with its file where they are not all the first file's.
func (t *Table) rowList(rows []int) string {
	parts := make([]string, len(rows))
	plain := true
	for i, r := range rows {
		parts[i] = t.where(r)
		plain = plain && strings.HasPrefix(parts[i], "row ")
	}
	if !plain {
		return strings.Join(parts, ", ")
	}
	for i := range parts {
		parts[i] = strings.TrimPrefix(parts[i], "row ")
	}
	return plural(len(rows), "row ", "rows ") + strings.Join(parts, ", ")
}

// badCells lists the first bad cells: "row 5: not a number: "1,5", ...",
// as many as fit in maxCellsLen bytes (the first always).
func (t *Table) badCells(cells []BadCell, count int) string {
	parts := make([]string, len(cells))
	for i, b := range cells {
		parts[i] = fmt.Sprintf("%s: %s", t.where(b.Row), b.Msg)
	}
	s, listed := joinCount(parts, ", ", maxCellsLen)
	if count > listed {
		s += ", ..."
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// maxListLen bounds the list of columns in a one-line message about many
// columns, and maxCellsLen a column's list of bad cells within it, so that
// the message stays one readable line.
const (
	maxListLen  = 300
	maxCellsLen = 200
)

// joinWithin joins items with sep while the result stays within max bytes
// (the first item always), and says how many more there are.
func joinWithin(items []string, sep string, max int) string {
	s, n := joinCount(items, sep, max)
	if n < len(items) {
		s += fmt.Sprintf(" and %d more", len(items)-n)
	}
	return s
}

// joinCount joins the first items with sep while the result stays within
// max bytes (the first item always), and returns how many it joined.
func joinCount(items []string, sep string, max int) (string, int) {
	var b strings.Builder
	for i, it := range items {
		if i > 0 && b.Len()+len(sep)+len(it) > max {
			return b.String(), i
		}
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(it)
	}
	return b.String(), len(items)
}

// keptRows returns the rows the data set keeps (0-based): every row, less
// with MissingDrop those with a missing cell in a used column. It counts
// the missing cells of every used column in one pass and reports them all
// (MissingError), or those of the response (MissingImpute).
func (t *Table) keptRows(keep []bool, target int, policy MissingPolicy) ([]int, error) {
	var counts []string
	total := 0
	for j, c := range t.Columns {
		if !keep[j] && j != target {
			continue
		}
		if policy == MissingImpute && j != target {
			continue
		}
		n, first := c.MissingCount(t.Rows)
		if n == 0 {
			continue
		}
		total += n
		more := ""
		if n > len(first) {
			more = ", ..."
		}
		counts = append(counts, fmt.Sprintf("%s %d (%s%s)", Quote(c.Name), n, t.rowList(first), more))
	}
	switch {
	case total > 0 && policy == MissingImpute:
		return nil, &InputError{File: t.Source, Column: t.Columns[target].Name, Err: ErrMissingValue,
			Msg: fmt.Sprintf("the response has missing cells: %s; a response is never imputed: remove those rows, or drop every row with a missing cell (--missing drop)", joinWithin(counts, ", ", maxListLen))}
	case total > 0 && policy == MissingError:
		return nil, &InputError{File: t.Source, Err: ErrMissingValue,
			Msg: fmt.Sprintf("%d missing %s in %d %s: %s; drop the rows that have them (--missing drop) or impute them from the training rows (--missing impute)",
				total, plural(total, "cell", "cells"), len(counts), plural(len(counts), "column", "columns"), joinWithin(counts, ", ", maxListLen))}
	}
	rows := make([]int, 0, t.Rows)
	for i := 0; i < t.Rows; i++ {
		ok := true
		if policy != MissingDrop {
			rows = append(rows, i)
			continue
		}
		for j, c := range t.Columns {
			if (keep[j] || j == target) && c.Missing(i) {
				ok = false
				break
			}
		}
		if ok {
			rows = append(rows, i)
		}
	}
	if len(rows) == 0 {
		return nil, &InputError{File: t.Source, Err: ErrMissingValue, Msg: "every row has a missing cell: no row is left to learn from"}
	}
	return rows, nil
}

// categories returns the sorted categories of column c over rows (nil:
// every row of n): numbers in increasing order, then words in byte order.
func categories(c *TableColumn, n int, rows []int) []string {
	seen := map[string]float64{}
	visit := func(i int) {
		if s, ok := c.Category(i); ok {
			if _, dup := seen[s]; !dup {
				v := math.NaN()
				if c.Codes == nil || c.Codes[i] < 0 {
					v = c.Numbers[i]
				}
				seen[s] = v
			}
		}
	}
	if rows == nil {
		for i := 0; i < n; i++ {
			visit(i)
		}
	} else {
		for _, i := range rows {
			visit(i)
		}
	}
	out := make([]string, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b string) int {
		va, vb := seen[a], seen[b]
		switch na, nb := !math.IsNaN(va), !math.IsNaN(vb); {
		case na && nb:
			if va != vb {
				if va < vb {
					return -1
				}
				return 1
			}
		case na:
			return -1
		case nb:
			return 1
		}
		return strings.Compare(a, b)
	})
	return out
}

// encode builds the data set of the kept columns and rows.
func (t *Table) encode(opt PrepareOptions, keep, cat []bool, target int, rows []int) (*Dataset, error) {
	enc := &Encoding{Options: opt, Rows: rows}
	var names []string
	var fill []func(i, row int, x []float64) // each writes its columns of a row
	for j, c := range t.Columns {
		if !keep[j] && j != target {
			continue
		}
		nMissing := 0
		if j != target && opt.Missing == MissingImpute {
			nMissing, _ = c.MissingCount(t.Rows)
		}
		ec := EncodedColumn{Name: c.Name}
		at := len(names)
		if cat[j] {
			ec.Levels = categories(c, t.Rows, rows)
			index := make(map[string]int, len(ec.Levels))
			for k, l := range ec.Levels {
				index[l] = k
				ec.Columns = append(ec.Columns, c.Name+"="+l)
			}
			fill = append(fill, func(_, row int, x []float64) {
				s, ok := c.Category(row)
				for k := range ec.Levels {
					x[at+k] = 0
					if !ok {
						x[at+k] = math.NaN()
					}
				}
				if ok {
					x[at+index[s]] = 1
				}
			})
		} else {
			ec.Columns = []string{c.Name}
			fill = append(fill, func(_, row int, x []float64) { x[at] = c.number(row) })
		}
		if nMissing > 0 {
			ec.Missing = c.Name + ":missing"
			ec.Columns = append(ec.Columns, ec.Missing)
			m := at + len(ec.Columns) - 1
			fill = append(fill, func(_, row int, x []float64) {
				x[m] = 0
				if c.Missing(row) {
					x[m] = 1
				}
			})
		}
		names = append(names, ec.Columns...)
		if j != target {
			enc.Columns = append(enc.Columns, ec)
		}
	}
	if err := checkEncodedNames(t.Source, names); err != nil {
		return nil, err
	}
	x := mat.NewDense(len(rows), len(names), nil)
	for i, row := range rows {
		r := x.RawRowView(i)
		for _, f := range fill {
			f(i, row, r)
		}
	}
	d := &Dataset{Source: t.Source, Names: names, X: x, Encoding: enc, Parts: t.keptParts(rows),
		locate: func(i int) (string, int) { return t.locate(rows[i]) }}
	if enc.plain() && len(rows) == t.Rows {
		d.Encoding = nil // a table of numbers, as ReadCSV reads it
	}
	return d, nil
}

// plain reports whether the encoding leaves the file's columns as they
// are: every column kept, as numbers, with no cell imputed.
func (e *Encoding) plain() bool {
	o := e.Options
	if len(o.Features) > 0 || len(o.Drop) > 0 || len(o.Categorical) > 0 {
		return false
	}
	for _, c := range e.Columns {
		if c.Categorical() || c.Missing != "" {
			return false
		}
	}
	return true
}

// checkEncodedNames reports an indicator column whose name is another
// column's ("zone=north" beside a column of that name).
func checkEncodedNames(source string, names []string) error {
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		if seen[n] {
			return &InputError{File: source, Column: n, Msg: "an indicator column of the encoding has the name of another column; rename that column"}
		}
		seen[n] = true
	}
	return nil
}

// Equal reports whether o and p prepare the features alike (a "" and an
// "error" Missing are alike; the Target is not compared, as "" may name
// the last column).
func (o PrepareOptions) Equal(p PrepareOptions) bool {
	mo, _ := ParseMissing(string(o.Missing))
	mp, _ := ParseMissing(string(p.Missing))
	return mo == mp && slices.Equal(o.Features, p.Features) &&
		slices.Equal(o.Drop, p.Drop) && slices.Equal(o.Categorical, p.Categorical)
}

// String writes the options as vi's flags would give them.
func (o *PrepareOptions) String() string {
	if o == nil {
		return "no preparation (a table of numbers)"
	}
	var parts []string
	if len(o.Features) > 0 {
		parts = append(parts, "--features "+strings.Join(o.Features, ","))
	}
	if len(o.Drop) > 0 {
		parts = append(parts, "--drop "+strings.Join(o.Drop, ","))
	}
	if len(o.Categorical) > 0 {
		parts = append(parts, "--categorical "+strings.Join(o.Categorical, ","))
	}
	m, _ := ParseMissing(string(o.Missing))
	parts = append(parts, "--missing "+string(m))
	return strings.Join(parts, " ")
}

// textResponse is the error for a response column of words, naming its
// first word.
func (t *Table) textResponse(c *TableColumn) error {
	for i := 0; i < t.Rows; i++ {
		if c.Codes[i] >= 0 {
			file, row := t.locate(i)
			return &InputError{File: file, Row: row, Column: c.Name, Err: ErrText,
				Msg: cellMessage(c.Levels[c.Codes[i]]) + "; the response must be numbers: code a category's classes 0, 1, 2, ... (0 and 1 for two: a binary task)"}
		}
	}
	return &InputError{File: t.Source, Column: c.Name, Msg: "the response has no number"}
}

// keptParts returns the data set's Parts for a table joined from several
// files, given the rows kept (0-based, increasing); nil for one file.
func (t *Table) keptParts(rows []int) []Part {
	if len(t.parts) < 2 {
		return nil
	}
	var out []Part
	start := 0 // the part's first table row
	for _, p := range t.parts {
		k, _ := slices.BinarySearch(rows, start)
		out = append(out, Part{Source: p.source, Start: k})
		start += p.rows
	}
	return out
}
