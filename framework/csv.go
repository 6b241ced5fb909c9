package framework

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// LoadCSV reads a numeric CSV file with a header row; see ReadCSV.
func LoadCSV(path string) (*Dataset, error) {
	f, err := os.Open(path)
	if err != nil {
		msg := "cannot open: " + unwrapPathError(err).Error()
		if errors.Is(err, fs.ErrNotExist) {
			msg = "no such file"
		}
		return nil, &InputError{File: path, Msg: msg}
	}
	defer f.Close()
	return ReadCSV(f, path)
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// ReadCSV reads a numeric table from r; source names it in messages (a file
// path). The first row must be a header of distinct, non-empty column names:
// a first row whose every cell parses as a number is taken for data and
// rejected. Every later row must have as many fields as the header and a
// finite number in each (NaN and Inf are rejected). Fields are trimmed of
// spaces, blank lines are skipped, and \r\n line ends are accepted. Every
// failure is an *InputError naming source and, where they apply, the row
// (the header is row 1) and the column.
func ReadCSV(r io.Reader, source string) (*Dataset, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	cr.ReuseRecord = true

	row := 0 // records read so far; the header is row 1
	// next returns the next record, trimmed, and its file line.
	next := func() ([]string, int, error) {
		rec, err := cr.Read()
		if err == io.EOF {
			return nil, 0, err
		}
		row++
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, 0, &InputError{File: source, Row: row, Msg: fmt.Sprintf("line %d: %v", pe.Line, pe.Err)}
			}
			return nil, 0, &InputError{File: source, Row: row, Msg: "read error: " + err.Error()}
		}
		line, _ := cr.FieldPos(0)
		for i := range rec {
			rec[i] = strings.TrimSpace(rec[i])
		}
		return rec, line, nil
	}

	header, _, err := next()
	if err == io.EOF {
		return nil, &InputError{File: source, Msg: "empty file"}
	}
	if err != nil {
		return nil, err
	}
	if len(header) > 0 {
		header[0] = strings.TrimSpace(strings.TrimPrefix(header[0], "\ufeff")) // UTF-8 byte order mark
	}
	names := append([]string(nil), header...)
	if err := checkHeader(source, names); err != nil {
		return nil, err
	}

	var data []float64
	for {
		rec, line, err := next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		where := ""
		if line != row {
			where = fmt.Sprintf(" (line %d)", line)
		}
		if len(rec) != len(names) {
			return nil, &InputError{File: source, Row: row,
				Msg: fmt.Sprintf("expected %d fields (as in the header), got %d%s", len(names), len(rec), where)}
		}
		for j, s := range rec {
			v, err := parseCell(s)
			if err != nil {
				return nil, &InputError{File: source, Row: row, Column: names[j], Msg: err.Error() + where}
			}
			data = append(data, v)
		}
	}
	if len(data) == 0 {
		return nil, &InputError{File: source, Msg: "header but no data rows"}
	}
	return &Dataset{
		Source: source,
		Names:  names,
		X:      mat.NewDense(len(data)/len(names), len(names), data),
	}, nil
}

// checkHeader rejects a first row that is all numbers, and empty or
// duplicate names.
func checkHeader(source string, names []string) error {
	numeric := true
	for _, s := range names {
		if _, err := strconv.ParseFloat(s, 64); err != nil {
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
		if k, dup := seen[s]; dup {
			return &InputError{File: source, Row: 1, Column: s,
				Msg: fmt.Sprintf("duplicate column name (columns %d and %d)", k+1, j+1)}
		}
		seen[s] = j
	}
	return nil
}

// parseCell parses a finite number; its errors are messages for InputError.
func parseCell(s string) (float64, error) {
	if s == "" {
		return 0, errors.New("empty cell (missing values are not supported)")
	}
	v, err := strconv.ParseFloat(s, 64)
	switch {
	case math.IsNaN(v):
		return 0, fmt.Errorf("NaN is not allowed (got %q)", s)
	case math.IsInf(v, 0):
		// Includes overflow such as 1e400, which ParseFloat maps to ±Inf.
		return 0, fmt.Errorf("infinite value is not allowed (got %q)", s)
	case err != nil:
		return 0, fmt.Errorf("not a number: %q", s)
	}
	return v, nil
}

// Column returns the index of the named column. An unknown name is an
// *InputError naming the data set's source and the column, with the
// available names when there are few.
func (d *Dataset) Column(name string) (int, error) {
	for j, s := range d.Names {
		if s == name {
			return j, nil
		}
	}
	msg := fmt.Sprintf("no such column (the file has %d columns)", len(d.Names))
	if len(d.Names) <= 20 {
		msg = "no such column (have " + strings.Join(d.Names, ", ") + ")"
	}
	return -1, &InputError{File: d.Source, Column: name, Msg: msg}
}
