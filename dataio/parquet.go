package dataio

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// parquetMagic opens (and ends) every Parquet file.
const parquetMagic = "PAR1"

// isParquet reports whether path names a Parquet file: by its name
// (.parquet, .pq) or, for another name, by its first four bytes.
func isParquet(path string) bool {
	lower := strings.ToLower(path)
	if strings.HasSuffix(lower, ".parquet") || strings.HasSuffix(lower, ".pq") {
		return true
	}
	if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() {
		return false // a FIFO or device: not opened twice (an open may block)
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	b := make([]byte, len(parquetMagic))
	_, err = io.ReadFull(f, b)
	return err == nil && string(b) == parquetMagic
}

// loadParquet reads a Parquet file (ReadParquet), giving up when ctx is
// done.
func loadParquet(ctx context.Context, path string) (*Table, error) {
	f, err := openInput(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, &InputError{File: path, Msg: "cannot stat: " + unwrapPathError(err).Error()}
	}
	return readParquet(ctx, f, st.Size(), path)
}

// ReadParquet reads a Parquet file of size bytes from r as a Table, one
// column per leaf column of a flat schema: booleans (0/1), integers and
// floating-point numbers are Numeric columns (a decimal's scale applied;
// a floating-point NaN is a missing cell), strings, enums and other byte
// arrays are Text columns (dictionary-encoded or not), and a null (or an
// empty string, as an empty CSV cell) is a missing cell. Nested columns
// (lists, maps, structs) are refused, naming the column. Dates, times,
// timestamps (INT96 ones too) and the other types that are not read as
// numbers or text are columns that Prepare refuses only where a run uses
// them (TableColumn.Refused), so that --drop leaves them out. Every
// compression codec of the format is read (snappy, gzip, zstd, lz4,
// brotli).
func ReadParquet(r io.ReaderAt, size int64, source string) (*Table, error) {
	return readParquet(context.Background(), r, size, source)
}

func readParquet(ctx context.Context, r io.ReaderAt, size int64, source string) (*Table, error) {
	pf, err := parquet.OpenFile(r, size)
	if err != nil {
		return nil, &InputError{File: source, Msg: "not a readable Parquet file: " + err.Error()}
	}
	schema := pf.Schema()
	var names []string
	var kinds []parquetKind
	for _, path := range schema.Columns() {
		leaf, _ := schema.Lookup(path...)
		name := strings.Join(path, ".")
		if leaf.MaxRepetitionLevel > 0 || len(path) > 1 {
			return nil, &InputError{File: source, Column: name, Msg: "a nested column (list, map or struct): only flat tables are read; flatten it first"}
		}
		k, err := kindOf(leaf.Node.Type())
		if err != nil {
			k.refused = err.Error()
		}
		names = append(names, name)
		kinds = append(kinds, k)
	}
	if len(names) == 0 {
		return nil, &InputError{File: source, Msg: "the Parquet file has no columns"}
	}
	if err := checkHeader(source, names); err != nil {
		return nil, err
	}
	b := newTableBuilder(names)
	rows := int(pf.NumRows())
	if rows == 0 {
		return nil, &InputError{File: source, Msg: "no data rows"}
	}
	for j, k := range kinds {
		c := b.cols[j]
		if k.refused != "" {
			c.Refused, c.Numbers = k.refused, make([]float64, rows)
			for i := range c.Numbers {
				c.Numbers[i] = math.NaN()
			}
		} else if k.text {
			c.Kind, c.Codes, b.index[j] = Text, make([]int32, 0, rows), map[string]int32{}
		} else {
			c.Numbers = make([]float64, 0, rows)
		}
	}
	for _, rg := range pf.RowGroups() {
		for j, cc := range rg.ColumnChunks() {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("%s: reading interrupted: %w", source, context.Cause(ctx))
			}
			if kinds[j].refused != "" {
				continue
			}
			if err := readParquetColumn(b, j, kinds[j], cc); err != nil {
				return nil, &InputError{File: source, Column: names[j], Msg: err.Error()}
			}
		}
	}
	b.rows = rows
	for j, c := range b.cols {
		if n := max(len(c.Numbers), len(c.Codes)); n != rows {
			return nil, &InputError{File: source, Column: names[j], Msg: fmt.Sprintf("holds %d values for %d rows", n, rows)}
		}
	}
	return &Table{Source: source, Columns: b.cols, Rows: rows, parts: []tablePart{{source, rows, 1}}}, nil
}

// parquetKind is how a Parquet column's values are read: as text, or as
// numbers divided by scale (a decimal's power of ten; 1 otherwise), or
// not at all (refused says why).
type parquetKind struct {
	text    bool
	scale   float64
	refused string
}

// kindOf returns how values of type t are read, or why they are not.
func kindOf(t parquet.Type) (parquetKind, error) {
	num := parquetKind{scale: 1}
	if lt := t.LogicalType(); lt != nil && lt.Value != nil {
		switch v := lt.Value.(type) {
		case *format.StringType, *format.EnumType, *format.JsonType, *format.UUIDType:
			return parquetKind{text: true}, nil
		case *format.DecimalType:
			if t.Kind() != parquet.Int32 && t.Kind() != parquet.Int64 {
				return num, fmt.Errorf("a decimal stored as %s is not read; store it as a double or an int64 decimal", t.Kind())
			}
			num.scale = math.Pow(10, float64(v.Scale))
			return num, nil
		case *format.IntType, *format.NullType:
			return num, nil
		case *format.TimestampType, *format.DateType, *format.TimeType:
			return num, fmt.Errorf("a %s column is not read: a date or time is no number a network learns from as it is; convert it first (seconds since a start, or the hour, weekday or month that matter)", lt)
		default:
			return num, fmt.Errorf("a %s column is not read as a feature; convert it to numbers or text first", lt)
		}
	}
	switch t.Kind() {
	case parquet.Boolean, parquet.Int32, parquet.Int64, parquet.Float, parquet.Double:
		return num, nil
	case parquet.ByteArray, parquet.FixedLenByteArray:
		return parquetKind{text: true}, nil
	}
	return num, fmt.Errorf("a %s column (a legacy timestamp) is not read: a date or time is no number a network learns from as it is; convert it first (seconds since a start, or the hour, weekday or month that matter)", t.Kind())
}

// readParquetColumn appends a column chunk's values to column j of b.
func readParquetColumn(b *tableBuilder, j int, k parquetKind, cc parquet.ColumnChunk) error {
	pages := cc.Pages()
	defer pages.Close()
	c := b.cols[j]
	buf := make([]parquet.Value, 1024)
	for {
		p, err := pages.ReadPage()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading a page: %w", err)
		}
		vr := p.Values()
		for {
			n, err := vr.ReadValues(buf)
			for _, v := range buf[:n] {
				switch {
				case k.text && (v.IsNull() || len(v.ByteArray()) == 0):
					c.Codes = append(c.Codes, -1) // missing, as an empty CSV cell
				case k.text:
					s := v.ByteArray()
					if !utf8.Valid(s) {
						parquet.Release(p)
						return fmt.Errorf("row %d: text that is not UTF-8: %s", len(c.Codes)+1, Quote(string(s)))
					}
					b.appendWord(j, s)
				case v.IsNull():
					c.Numbers = append(c.Numbers, math.NaN())
				default:
					x, err := numberOf(v, k.scale)
					if err != nil {
						parquet.Release(p)
						return fmt.Errorf("row %d: %w", len(c.Numbers)+1, err)
					}
					c.Numbers = append(c.Numbers, x)
				}
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				parquet.Release(p)
				return fmt.Errorf("reading values: %w", err)
			}
		}
		parquet.Release(p)
	}
}

// numberOf returns a numeric value as a float64, divided by scale; NaN
// (a missing value) stays NaN, an infinity is an error.
func numberOf(v parquet.Value, scale float64) (float64, error) {
	var x float64
	switch v.Kind() {
	case parquet.Boolean:
		if v.Boolean() {
			x = 1
		}
	case parquet.Int32:
		x = float64(v.Int32())
	case parquet.Int64:
		x = float64(v.Int64())
	case parquet.Float:
		x = float64(v.Float())
	case parquet.Double:
		x = v.Double()
	default:
		return 0, fmt.Errorf("unexpected %s value in a numeric column", v.Kind())
	}
	if math.IsInf(x, 0) {
		return 0, fmt.Errorf("infinite value is not allowed")
	}
	return x / scale, nil
}

// appendWord appends the text s to column j, interning it.
func (b *tableBuilder) appendWord(j int, s []byte) {
	c := b.cols[j]
	code, ok := b.index[j][string(s)]
	if !ok {
		code = int32(len(c.Levels))
		c.Levels = append(c.Levels, string(bytes.Clone(s)))
		b.index[j][c.Levels[code]] = code
	}
	c.Codes = append(c.Codes, code)
}
