package dataio

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"gonum.org/v1/gonum/mat"
)

// LoadCSV reads a numeric CSV file with a header row (see ReadCSV); the
// path Stdin ("-") reads standard input. It returns as soon as ctx is done,
// even while the open or a read blocks (see LoadFile).
func LoadCSV(ctx context.Context, path string) (*Dataset, error) {
	return LoadFile(ctx, path, ReadCSV)
}

// ReadCSV reads a numeric table from r; source names it in messages (a file
// path). The first row must be a header of distinct, non-empty column names:
// a first row whose every cell is a number is taken for data and rejected.
// Every later row must have as many fields as the header and a finite
// decimal number in each (see ParseNumber). Fields may be quoted and are
// trimmed of spaces, blank lines are skipped, a leading UTF-8 byte order
// mark is dropped, and lines may end in \n, \r\n or \r alone. Every failure
// is an *InputError naming source and, where they apply, the row (the header
// is row 1) and the column; a long bad cell is shown cut short.
func ReadCSV(r io.Reader, source string) (*Dataset, error) {
	d, _, err := readCSV(r, source, "")
	return d, err
}

// LoadCSVLabels reads a numeric CSV file as LoadCSV does, except for the
// column named label, whose cells are read as text (trimmed) and returned
// one per row, in order, instead of being a column of the data set (a
// split column's train/eval or fold numbers, say). A file without that
// column is an *InputError naming it.
func LoadCSVLabels(ctx context.Context, path, label string) (*Dataset, []string, error) {
	type result struct {
		d      *Dataset
		labels []string
	}
	res, err := LoadFile(ctx, path, func(r io.Reader, source string) (result, error) {
		d, labels, err := readCSV(r, source, label)
		return result{d, labels}, err
	})
	return res.d, res.labels, err
}

// csvRecords reads a CSV file's records one at a time: fields may be
// quoted and are trimmed of spaces, blank lines are skipped, a leading
// UTF-8 byte order mark is dropped, and lines may end in \n, \r\n or \r
// alone.
type csvRecords struct {
	cr     *csv.Reader
	source string
	row    int // records read so far; the header is row 1
}

func newCSVRecords(r io.Reader, source string) *csvRecords {
	cr := csv.NewReader(textReader(r))
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	cr.ReuseRecord = true
	return &csvRecords{cr: cr, source: source}
}

// next returns the next record, trimmed, and its file line; io.EOF after
// the last.
func (c *csvRecords) next() ([]string, int, error) {
	rec, err := c.cr.Read()
	if err == io.EOF {
		return nil, 0, err
	}
	c.row++
	if err != nil {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return nil, 0, &InputError{File: c.source, Row: c.row, Msg: fmt.Sprintf("line %d: %v", pe.Line, pe.Err)}
		}
		return nil, 0, &InputError{File: c.source, Row: c.row, Msg: "read error: " + err.Error()}
	}
	line, _ := c.cr.FieldPos(0)
	for i := range rec {
		rec[i] = trimField(rec[i])
	}
	return rec, line, nil
}

// header reads the header row and checks it (checkHeader).
func (c *csvRecords) header() ([]string, error) {
	header, _, err := c.next()
	if err == io.EOF {
		return nil, &InputError{File: c.source, Msg: "empty file"}
	}
	if err != nil {
		return nil, err
	}
	names := append([]string(nil), header...)
	if err := checkHeader(c.source, names); err != nil {
		return nil, err
	}
	return names, nil
}

// record reads the next data row, checking that it has n fields; io.EOF
// after the last. where is " (line L)" when the record's line is not its
// row, for messages.
func (c *csvRecords) record(n int) (rec []string, where string, err error) {
	rec, line, err := c.next()
	if err != nil {
		return nil, "", err
	}
	if line != c.row {
		where = fmt.Sprintf(" (line %d)", line)
	}
	if len(rec) != n {
		return nil, "", &InputError{File: c.source, Row: c.row,
			Msg: fmt.Sprintf("expected %d fields (as in the header), got %d%s", n, len(rec), where)}
	}
	return rec, where, nil
}

// readCSV is ReadCSV, the column named label ("" for none) read as text
// and returned apart.
func readCSV(r io.Reader, source, label string) (*Dataset, []string, error) {
	recs := newCSVRecords(r, source)
	names, err := recs.header()
	if err != nil {
		return nil, nil, err
	}
	lab := -1 // the label column's index
	if label != "" {
		d := &Dataset{Source: source, Names: names}
		if lab, err = d.Column(label); err != nil {
			return nil, nil, err
		}
		if len(names) < 2 {
			return nil, nil, &InputError{File: source, Column: label, Msg: "the file has no column besides it"}
		}
	}

	var data []float64
	var labels []string
	for {
		rec, where, err := recs.record(len(names))
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		for j, s := range rec {
			if j == lab {
				labels = append(labels, s)
				continue
			}
			v, err := ParseNumber(s)
			if err != nil {
				return nil, nil, &InputError{File: source, Row: recs.row, Column: names[j], Msg: err.Error() + where, Err: err}
			}
			data = append(data, v)
		}
	}
	if len(data) == 0 {
		return nil, nil, &InputError{File: source, Msg: "header but no data rows"}
	}
	if lab >= 0 {
		names = append(names[:lab:lab], names[lab+1:]...)
	}
	return &Dataset{
		Source: source,
		Names:  names,
		X:      mat.NewDense(len(data)/len(names), len(names), data),
	}, labels, nil
}

// checkHeader rejects a first row that is all numbers, and empty or
// duplicate names.
func checkHeader(source string, names []string) error {
	numeric := true
	for _, s := range names {
		if !isDecimal(s) {
			numeric = false
			break
		}
	}
	if numeric {
		return &InputError{File: source, Row: 1,
			Msg: "no header: every cell of the first row is a number; the first row must name the columns"}
	}
	seen := make(map[string]int, len(names))
	for j, s := range names {
		if s == "" {
			return &InputError{File: source, Row: 1, Msg: fmt.Sprintf("column %d of the header has an empty name", j+1)}
		}
		// JSON would write invalid UTF-8 as U+FFFD (two names could
		// become one), and a NUL ends a name in C.
		if !utf8.ValidString(s) {
			return &InputError{File: source, Row: 1, Msg: fmt.Sprintf("column %d of the header is not valid UTF-8: %s (save the file as UTF-8)", j+1, Quote(s))}
		}
		if strings.ContainsRune(s, 0) {
			return &InputError{File: source, Row: 1, Msg: fmt.Sprintf("column %d of the header has a NUL character: %s", j+1, Quote(s))}
		}
		if k, dup := seen[s]; dup {
			return &InputError{File: source, Row: 1, Column: s,
				Msg: fmt.Sprintf("duplicate column name (columns %d and %d)", k+1, j+1)}
		}
		seen[s] = j
	}
	return nil
}

// ParseNumber parses a finite number in the decimal grammar that R's
// read.csv and pandas read as numbers: an optional sign, digits with at most
// one decimal point (at least one digit), and an optional exponent (e or E,
// an optional sign, digits); the caller trims surrounding spaces. Go's
// other literal forms (digit separators "1_000", hexadecimal "0x1p-2"), the
// words for missing and non-finite values (NA, NaN, Inf, Infinity) and
// values beyond float64's range (1e400) are rejected; values below its
// smallest subnormal read as 0, as C's strtod has them. Its errors are
// one-line messages for InputError, with a long cell cut short.
func ParseNumber(s string) (float64, error) {
	if !isDecimal(s) {
		return 0, notDecimal(s)
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%s is out of range (beyond +-1.8e308, the largest float64)", Quote(s))
	}
	return v, nil
}

// isDecimal reports whether s is [+-]digits[.digits][(e|E)[+-]digits] with
// at least one mantissa digit (either side of the point).
func isDecimal(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := 0
	for ; i < len(s) && isDigit(s[i]); i++ {
		digits++
	}
	if i < len(s) && s[i] == '.' {
		for i++; i < len(s) && isDigit(s[i]); i++ {
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		exp := 0
		for ; i < len(s) && isDigit(s[i]); i++ {
			exp++
		}
		if exp == 0 {
			return false
		}
	}
	return i == len(s)
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// startsWithLetter reports whether s begins with a letter (of any script):
// a word, not a malformed number.
func startsWithLetter(s string) bool {
	for _, r := range s {
		return unicode.IsLetter(r)
	}
	return false
}

// The kinds of cell that are not numbers, for errors.Is on ReadCSV's and
// ParseNumber's errors: a tool can say what to do about each.
var (
	// ErrMissingValue: an empty cell, NA or N/A.
	ErrMissingValue = errors.New("missing value")
	// ErrText: a word, such as a category's name ("north").
	ErrText = errors.New("text")
)

// cellError is a cell's error of a known kind.
type cellError struct {
	msg  string
	kind error
}

func (e *cellError) Error() string { return e.msg }
func (e *cellError) Unwrap() error { return e.kind }

// notDecimal is the error for a cell that isDecimal rejects, saying why
// where a reason is known.
func notDecimal(s string) error {
	body := strings.TrimLeft(s, "+-")
	switch lower := strings.ToLower(body); {
	case s == "":
		return &cellError{"empty cell (missing values are not supported)", ErrMissingValue}
	case s == "NA" || s == "N/A":
		return &cellError{fmt.Sprintf("missing value %s (missing values are not supported)", Quote(s)), ErrMissingValue}
	case lower == "nan":
		return fmt.Errorf("NaN is not allowed (got %s)", Quote(s))
	case lower == "inf" || lower == "infinity":
		return fmt.Errorf("infinite value is not allowed (got %s)", Quote(s))
	case strings.HasPrefix(lower, "0x"):
		return fmt.Errorf("not a number: %s (hexadecimal is not allowed; want a decimal number such as 0.25 or 1e-3)", Quote(s))
	case strings.Contains(s, "_"):
		return fmt.Errorf("not a number: %s (digit separators such as _ are not allowed)", Quote(s))
	case strings.Contains(s, ","):
		return fmt.Errorf("not a number: %s (the decimal separator is '.', and numbers have no thousands separators)", Quote(s))
	case startsWithLetter(body):
		return &cellError{fmt.Sprintf("not a number: %s", Quote(s)), ErrText}
	}
	return fmt.Errorf("not a number: %s", Quote(s))
}

// listedName is a column name as a list in a message shows it: as it is
// when it is short and plain, else quoted and cut (Quote).
func listedName(s string) string {
	if len(s) <= 32 && strconv.Quote(s) == `"`+s+`"` && !strings.ContainsAny(s, ", ") {
		return s
	}
	return Quote(s)
}

// listNames joins column names for a message, each as listedName shows it.
func listNames(names []string) string {
	listed := make([]string, len(names))
	for j, n := range names {
		listed[j] = listedName(n)
	}
	return strings.Join(listed, ", ")
}
