package dataio

import (
	"context"
	"io"
	"strings"
)

// LoadTable reads a data file as a Table: Parquet (ReadParquet) when its
// name ends in .parquet or .pq, or when it starts with Parquet's magic
// bytes, else CSV (ReadTable); the path Stdin ("-") reads CSV from
// standard input. Like LoadCSV it returns as soon as ctx is done.
func LoadTable(ctx context.Context, path string) (*Table, error) {
	if path != Stdin && isParquet(path) {
		return loadParquet(ctx, path)
	}
	return LoadFile(ctx, path, ReadTable)
}

// ReadTable reads a CSV file with a header row as a Table, as ReadCSV
// reads it except for the cells: a cell is a number (ParseNumber's
// grammar), missing (empty, NA, N/A, NaN, null or NULL) or a word, any
// other text. A column whose words are at least as many as its numbers is
// a Text column, its numbers then categories too; a column of mostly
// numbers with some words is a Numeric column with bad cells (a typo such
// as "1,5" or "n/a2"), which Prepare reports unless the column is named
// categorical.
func ReadTable(r io.Reader, source string) (*Table, error) {
	recs := newCSVRecords(r, source)
	names, err := recs.header()
	if err != nil {
		return nil, err
	}
	b := newTableBuilder(names)
	for {
		rec, _, err := recs.record(len(names))
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		for j, s := range rec {
			switch {
			case isMissingCell(s):
			case isDecimal(s):
				if v, err := ParseNumber(s); err == nil {
					b.number(j, v)
				} else {
					b.word(j, strings.Clone(s)) // out of range: a bad cell
				}
			default:
				b.word(j, strings.Clone(s))
			}
		}
		b.endRow()
	}
	if b.rows == 0 {
		return nil, &InputError{File: source, Msg: "header but no data rows"}
	}
	return b.table(source, 2, func(j, i int) string {
		c := b.cols[j]
		return cellMessage(c.Levels[c.Codes[i]])
	}), nil
}

// isMissingCell reports whether a CSV cell (trimmed) marks a missing
// value: empty, NA, N/A, NaN (any case), null or NULL, as R and pandas
// write them.
func isMissingCell(s string) bool {
	switch s {
	case "", "NA", "N/A", "null", "NULL":
		return true
	}
	return strings.EqualFold(s, "nan")
}

// cellMessage says why a cell is not a number.
func cellMessage(s string) string {
	if _, err := ParseNumber(s); err != nil {
		return err.Error()
	}
	return "a number"
}
