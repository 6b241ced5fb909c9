package dataio

import (
	"errors"
	"fmt"
	"math"
	"strconv"
)

// A Table is a data file's columns as read, before any encoding: numbers,
// text and missing cells, with the names of the header. ReadTable reads
// one from CSV, ReadParquet from Parquet; Prepare turns it into the
// numeric Dataset that models learn from.
type Table struct {
	Source  string
	Columns []*TableColumn
	Rows    int
	// parts are the files whose rows the table holds, in order (one,
	// or two for JoinTables), for messages.
	parts []tablePart
}

// A tablePart is one file's rows of a Table: its name, its rows, and the
// number of its first data row in messages (2 in a CSV file, whose header
// is row 1; 1 in a Parquet file).
type tablePart struct {
	source   string
	rows     int
	firstRow int
}

// where names row i (0-based) of the table in messages: "row N", or "FILE
// row N" for a row of a joined table's second file.
func (t *Table) where(i int) string {
	file, row := t.locate(i)
	if len(t.parts) > 1 && file != t.parts[0].source {
		return fmt.Sprintf("%s row %d", file, row)
	}
	return fmt.Sprintf("row %d", row)
}

// locate returns the file and the row number in it of row i (0-based).
func (t *Table) locate(i int) (string, int) {
	parts := t.partsOrOne()
	for k, p := range parts {
		if i < p.rows || k == len(parts)-1 {
			return p.source, i + p.firstRow
		}
		i -= p.rows
	}
	return t.Source, i + 2
}

// ColumnKind is what a column of a Table holds.
type ColumnKind int

const (
	// Numeric columns hold numbers (and missing cells).
	Numeric ColumnKind = iota
	// Text columns hold words, categories' names (and missing cells);
	// Prepare one-hot encodes them.
	Text
)

func (k ColumnKind) String() string {
	if k == Text {
		return "text"
	}
	return "numeric"
}

// A TableColumn is one column of a Table. A cell is a number
// (Numbers[i] is not NaN), a word (Codes[i] >= 0, an index into Levels)
// or missing (neither). A CSV column holds both numbers and words when
// its cells are mixed; Kind says which it is read as (see ReadTable).
type TableColumn struct {
	Name string
	Kind ColumnKind
	// Numbers holds each row's number, NaN where the cell is not one.
	// Nil for a column without numbers.
	Numbers []float64
	// Codes holds each row's word as an index into Levels, -1 where the
	// cell is not one. Nil for a column without words.
	Codes  []int32
	Levels []string
	// Bad lists the first cells of a Numeric column that are not numbers
	// (words in a column of numbers, malformed numbers), and BadCount
	// counts them all; Prepare refuses such a column unless it is named
	// categorical.
	Bad      []BadCell
	BadCount int
	// Refused, when set, says why the column cannot be a feature or the
	// response (a Parquet timestamp, say); its cells are all missing.
	// Prepare refuses it only where the run uses it, so that it can be
	// left out (--drop).
	Refused string
}

// A BadCell is a cell that does not fit its column: its row (0-based, in
// the table) and why.
type BadCell struct {
	Row int
	Msg string
}

// maxBadCells is how many bad cells of a column a message shows.
const maxBadCells = 3

// Missing reports whether row i's cell is missing.
func (c *TableColumn) Missing(i int) bool {
	return (c.Numbers == nil || math.IsNaN(c.Numbers[i])) && (c.Codes == nil || c.Codes[i] < 0)
}

// MissingCount counts the column's missing cells and returns the rows
// (0-based) of the first few.
func (c *TableColumn) MissingCount(rows int) (n int, first []int) {
	for i := 0; i < rows; i++ {
		if c.Missing(i) {
			if n < maxBadCells {
				first = append(first, i)
			}
			n++
		}
	}
	return n, first
}

// number returns row i's number, NaN where the cell is not one.
func (c *TableColumn) number(i int) float64 {
	if c.Numbers == nil {
		return math.NaN()
	}
	return c.Numbers[i]
}

// Category returns row i's category name: its word, or its number written
// the shortest way that reads back the same, a whole number without an
// exponent ("007" and "7.0" are category "7", 1e12 is "1000000000000");
// ok is false for a missing cell.
func (c *TableColumn) Category(i int) (string, bool) {
	if c.Codes != nil && c.Codes[i] >= 0 {
		return c.Levels[c.Codes[i]], true
	}
	if x := c.Numbers; x != nil && !math.IsNaN(x[i]) {
		// A whole number reads as written (1000000000000, not 1e+12), so
		// that a fold number or a code is named as the file has it.
		if x[i] == math.Trunc(x[i]) && !math.IsInf(x[i], 0) {
			return strconv.FormatFloat(x[i], 'f', -1, 64), true
		}
		return strconv.FormatFloat(x[i], 'g', -1, 64), true
	}
	return "", false
}

// Column returns the named column, or an *InputError naming it, with the
// nearest name when it looks mistyped.
func (t *Table) Column(name string) (*TableColumn, error) {
	for _, c := range t.Columns {
		if c.Name == name {
			return c, nil
		}
	}
	return nil, &InputError{File: t.Source, Column: name, Msg: noSuchColumn(name, t.Names())}
}

// Names returns the columns' names in order.
func (t *Table) Names() []string {
	out := make([]string, len(t.Columns))
	for j, c := range t.Columns {
		out[j] = c.Name
	}
	return out
}

// tableBuilder collects a table's cells column by column.
type tableBuilder struct {
	cols  []*TableColumn
	index []map[string]int32 // each column's words, by level
	rows  int
}

func newTableBuilder(names []string) *tableBuilder {
	b := &tableBuilder{index: make([]map[string]int32, len(names))}
	for _, n := range names {
		b.cols = append(b.cols, &TableColumn{Name: n})
	}
	return b
}

// number appends a number to column j of the current row.
func (b *tableBuilder) number(j int, v float64) {
	c := b.cols[j]
	if c.Numbers == nil {
		c.Numbers = nanSlice(b.rows)
	}
	c.Numbers = append(c.Numbers, v)
}

// word appends a word to column j of the current row.
func (b *tableBuilder) word(j int, s string) {
	c := b.cols[j]
	if c.Codes == nil {
		c.Codes = minusOnes(b.rows)
		b.index[j] = map[string]int32{}
	}
	code, ok := b.index[j][s]
	if !ok {
		code = int32(len(c.Levels))
		c.Levels = append(c.Levels, s)
		b.index[j][s] = code
	}
	c.Codes = append(c.Codes, code)
}

// endRow pads every column that the row gave no cell of (a missing cell,
// or the other kind) and moves to the next row.
func (b *tableBuilder) endRow() {
	b.rows++
	for _, c := range b.cols {
		if c.Numbers != nil && len(c.Numbers) < b.rows {
			c.Numbers = append(c.Numbers, math.NaN())
		}
		if c.Codes != nil && len(c.Codes) < b.rows {
			c.Codes = append(c.Codes, -1)
		}
	}
}

func nanSlice(n int) []float64 {
	s := make([]float64, n, max(2*n, 4))
	for i := range s {
		s[i] = math.NaN()
	}
	return s
}

func minusOnes(n int) []int32 {
	s := make([]int32, n, max(2*n, 4))
	for i := range s {
		s[i] = -1
	}
	return s
}

// table returns the table built, each column's kind decided by its cells:
// Text when more of them are words (text that starts with a letter, other
// than Inf, NaN or a hexadecimal number) than numbers and malformed
// numbers ("1,5", "1_000", "1e400") together, else Numeric, its cells
// that are not numbers then its bad cells (TableColumn.Bad).
func (b *tableBuilder) table(source string, firstRow int, bad func(j, i int) string) *Table {
	for j, c := range b.cols {
		words, others := 0, 0
		for i := 0; i < b.rows; i++ {
			switch {
			case c.Codes != nil && c.Codes[i] >= 0:
				if isWord(c.Levels[c.Codes[i]]) {
					words++
				} else {
					others++
				}
			case c.Numbers != nil && !math.IsNaN(c.Numbers[i]):
				others++
			}
		}
		if words > others {
			c.Kind = Text
			continue
		}
		c.BadCount = 0
		if c.Codes != nil {
			for _, code := range c.Codes {
				if code >= 0 {
					c.BadCount++
				}
			}
		}
		words = c.BadCount
		for i := 0; i < b.rows && len(c.Bad) < maxBadCells && words > 0; i++ {
			if c.Codes[i] >= 0 {
				c.Bad = append(c.Bad, BadCell{Row: i, Msg: bad(j, i)})
			}
		}
	}
	return &Table{Source: source, Columns: b.cols, Rows: b.rows, parts: []tablePart{{source, b.rows, firstRow}}}
}

// String describes the table's shape, for messages.
func (t *Table) String() string {
	return fmt.Sprintf("%s (%d rows, %d columns)", t.Source, t.Rows, len(t.Columns))
}

// isWord reports whether a cell that is not a number is a word (a
// category's name) rather than a malformed number.
func isWord(s string) bool {
	return errors.Is(notDecimal(s), ErrText)
}
