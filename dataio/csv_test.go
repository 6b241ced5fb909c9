package dataio

import (
	"context"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/lazyvi/lazyvi/framework"
	"gonum.org/v1/gonum/mat"
)

func TestReadCSVGood(t *testing.T) {
	in := "\ufeff a , b,y\r\n1, 2.5 ,3\r\n\r\n-4,5e-1,6\r\n"
	d, err := ReadCSV(strings.NewReader(in), "good.csv")
	if err != nil {
		t.Fatal(err)
	}
	if d.Source != "good.csv" {
		t.Errorf("want Source good.csv, got %q", d.Source)
	}
	if strings.Join(d.Names, "|") != "a|b|y" {
		t.Errorf("want names [a b y], got %q", d.Names)
	}
	want := mat.NewDense(2, 3, []float64{1, 2.5, 3, -4, 0.5, 6})
	if !mat.Equal(d.X, want) {
		t.Errorf("want X %v, got %v", mat.Formatted(want), mat.Formatted(d.X))
	}
	j, err := d.Column("y")
	if err != nil || j != 2 {
		t.Errorf("Column(y): want 2, nil, got %d, %v", j, err)
	}
}

func TestReadCSVErrors(t *testing.T) {
	cases := []struct {
		name string
		in   string
		row  int
		col  string
		msg  string
	}{
		{"empty", "", 0, "", "empty file"},
		{"blank", "\n\n", 0, "", "empty file"},
		{"no header", "1,2,3\n4,5,6\n", 1, "", "no header"},
		{"empty name", "a,,c\n1,2,3\n", 1, "", "column 2 of the header has an empty name"},
		{"duplicate", "a,b,a\n1,2,3\n", 1, "a", "duplicate column name (columns 1 and 3)"},
		{"header only", "a,b\n", 0, "", "header but no data rows"},
		{"ragged short", "a,b,c\n1,2,3\n4,5\n", 3, "", "expected 3 fields (as in the header), got 2"},
		{"ragged long", "a,b\n1,2\n3,4\n5,6,7\n", 4, "", "expected 2 fields (as in the header), got 3"},
		{"non-numeric", "a,b\n1,2\n3,x7\n", 3, "b", `not a number: "x7"`},
		{"empty cell", "a,b\n1,\n", 2, "b", "empty cell"},
		{"NaN", "a,b\n1,2\nNaN,4\n", 3, "a", "NaN is not allowed"},
		{"nan", "a,b\n1,2\nnan,4\n", 3, "a", "NaN is not allowed"},
		{"Inf", "a,b\n1,-Inf\n", 2, "b", "infinite value is not allowed"},
		{"+Inf", "a,b\n1,+Inf\n", 2, "b", "infinite value is not allowed"},
		{"Infinity", "a,b\n1,Infinity\n", 2, "b", "infinite value is not allowed"},
		{"NA", "a,b\nNA,1\n", 2, "a", `missing value "NA"`},
		{"overflow", "a,b\n1,1e400\n", 2, "b", `"1e400" is out of range`},
		{"digit separator", "a,b\n1_000,1\n", 2, "a", `not a number: "1_000" (digit separators`},
		{"hex float", "a,b\n1,0x1p-2\n", 2, "b", `not a number: "0x1p-2" (hexadecimal is not allowed`},
		{"decimal comma", "a,b\n\"1,5\",1\n", 2, "a", `not a number: "1,5" (the decimal separator is '.'`},
		{"lone point", "a,b\n.,1\n", 2, "a", `not a number: "."`},
		{"no exponent digits", "a,b\n1e,1\n", 2, "a", `not a number: "1e"`},
		{"double sign", "a,b\n--1,1\n", 2, "a", `not a number: "--1"`},
		{"CR only, bad cell", "a,b\r1,2\rx,3\r", 3, "a", `not a number: "x"`},
		{"CR only, ragged", "a,b\r1,2\r3\r", 3, "", "expected 2 fields (as in the header), got 1"},
		{"blank line shifts line", "a,b\n1,2\n\n3,z\n", 3, "b", "(line 4)"},
		{"bad quote", "a,b\n1,\"2\n", 2, "", "line"},
	}
	for i, c := range cases {
		_, err := ReadCSV(strings.NewReader(c.in), "data/bad.csv")
		if err == nil {
			t.Errorf("Case %d (%s): want error, got nil", i, c.name)
			continue
		}
		var ie *InputError
		if !errors.As(err, &ie) {
			t.Errorf("Case %d (%s): want *InputError, got %T %v", i, c.name, err, err)
			continue
		}
		if !errors.Is(err, framework.ErrUsage) {
			t.Errorf("Case %d (%s): error does not match ErrUsage", i, c.name)
		}
		s := err.Error()
		if ie.File != "data/bad.csv" || !strings.HasPrefix(s, "data/bad.csv") {
			t.Errorf("Case %d (%s): want the file named, got %q", i, c.name, s)
		}
		if ie.Row != c.row {
			t.Errorf("Case %d (%s): want row %d, got %d (%q)", i, c.name, c.row, ie.Row, s)
		}
		if c.row > 0 && !strings.Contains(s, "row "+strconv.Itoa(c.row)) {
			t.Errorf("Case %d (%s): want message with row %d, got %q", i, c.name, c.row, s)
		}
		if ie.Column != c.col || (c.col != "" && !strings.Contains(s, `column "`+c.col+`"`)) {
			t.Errorf("Case %d (%s): want column %q, got %q (%q)", i, c.name, c.col, ie.Column, s)
		}
		if !strings.Contains(s, c.msg) {
			t.Errorf("Case %d (%s): want message containing %q, got %q", i, c.name, c.msg, s)
		}
		if strings.Contains(s, "\n") {
			t.Errorf("Case %d (%s): message is not one line: %q", i, c.name, s)
		}
	}
}

func TestReadCSVSpreadsheet(t *testing.T) {
	want := mat.NewDense(2, 3, []float64{1, 0.25, -3000, 4, 5, 6})
	for _, c := range []struct{ name, in string }{
		// What Excel ("CSV UTF-8") and R's write.csv(fileEncoding = "UTF-8-BOM") write.
		{"BOM, quoted header, CRLF", "\ufeff\"a\",\"b\",\"y\"\r\n1,0.25,-3e3\r\n4,5,6\r\n"},
		{"BOM, quoted cells", "\ufeff\"a\",\"b\",\"y\"\n\"1\",\" .25\",\"-3E+03\"\n4,5.,+6\n"},
		{"CR only (classic Mac OS)", "a,b,y\r1,0.25,-3000\r4,5,6\r"},
		{"CR only, no final line end", "a,b,y\r1,0.25,-3000\r4,5,6"},
		{"mixed line ends", "a,b,y\r\n1,0.25,-3000\r4,5,6\n"},
		{"spaces around cells", "a , b ,y\n 1 ,0.25,  -3000\n4 , 5 , 6\n"},
	} {
		for _, oneByte := range []bool{false, true} {
			var r io.Reader = strings.NewReader(c.in)
			if oneByte { // a CR at the end of every read
				r = iotest.OneByteReader(r)
			}
			d, err := ReadCSV(r, "s.csv")
			if err != nil {
				t.Errorf("%s (one byte a read: %t): %v", c.name, oneByte, err)
				continue
			}
			if strings.Join(d.Names, "|") != "a|b|y" || !mat.Equal(d.X, want) {
				t.Errorf("%s (one byte a read: %t): got names %q, X %v", c.name, oneByte, d.Names, mat.Formatted(d.X))
			}
		}
	}
}

func TestReadCSVLongCellCut(t *testing.T) {
	bad := strings.Repeat("x", 2_000_000)
	_, err := ReadCSV(strings.NewReader("a,b\n1,"+bad+"\n"), "big.csv")
	if err == nil {
		t.Fatal("want an error")
	}
	s := err.Error()
	if len(s) > 200 || !strings.Contains(s, `row 2, column "b": not a number: "xxxx`) || !strings.Contains(s, "(2000000 bytes)") {
		t.Errorf("want a short message naming row, column and the cell's length, got %d bytes: %.300s", len(s), s)
	}
}

func TestParseNumber(t *testing.T) {
	for s, want := range map[string]float64{
		"0": 0, "-0": math.Copysign(0, -1), "+1": 1, "1.": 1, ".5": 0.5, "-.5e-3": -0.0005, "1E+05": 1e5,
		"007": 7, "1.7976931348623157e308": math.MaxFloat64, "4.9e-324": 5e-324, "1e-400": 0,
	} {
		v, err := ParseNumber(s)
		if err != nil || math.Float64bits(v) != math.Float64bits(want) {
			t.Errorf("ParseNumber(%q) = %v, %v; want %v", s, v, err, want)
		}
	}
	for _, s := range []string{"", " 1", "1 ", "+", "-", ".", "e1", "1e", "1e+", "1.2.3", "1_000", "0x10", "0x1p-2", "0b1", "1i",
		"Inf", "-inf", "NaN", "nan", "Infinity", "NA", "1e400", "-1e309", "１", "1,5", "1e5_0"} {
		if v, err := ParseNumber(s); err == nil {
			t.Errorf("ParseNumber(%q) = %v, want an error", s, v)
		}
	}
}

func TestLoadCSVMissing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nope.csv")
	_, err := LoadCSV(context.Background(), path)
	var ie *InputError
	if !errors.As(err, &ie) || !errors.Is(err, framework.ErrUsage) {
		t.Fatalf("want *InputError matching ErrUsage, got %T %v", err, err)
	}
	if want := path + ": no such file"; err.Error() != want {
		t.Errorf("want %q, got %q", want, err)
	}
}

func TestLoadCSVFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.csv")
	if err := os.WriteFile(path, []byte("x,y\n1,2\nfoo,3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadCSV(context.Background(), path)
	if err == nil || err.Error() != path+`: row 3, column "x": not a number: "foo"` {
		t.Errorf("got %v", err)
	}
}

func TestColumnUnknown(t *testing.T) {
	d := &Dataset{Source: "d.csv", Names: []string{"a", "b", "y"}}
	_, err := d.Column("z")
	var ie *InputError
	if !errors.As(err, &ie) || !errors.Is(err, framework.ErrUsage) {
		t.Fatalf("want *InputError, got %T %v", err, err)
	}
	if want := `d.csv, column "z": no such column (have a, b, y)`; err.Error() != want {
		t.Errorf("want %q, got %q", want, err)
	}
	many := &Dataset{Source: "m.csv", Names: make([]string, 64)}
	_, err = many.Column("z")
	if err == nil || !strings.Contains(err.Error(), "64 columns") {
		t.Errorf("want a count of columns, got %v", err)
	}
}

func TestLoadDiabetes(t *testing.T) {
	const path = "testdata/diabetes.csv" // a copy of scikit-learn's
	d, err := LoadCSV(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	r, c := d.X.Dims()
	if r != 442 || c != 11 || len(d.Names) != 11 {
		t.Fatalf("want 442 x 11, got %d x %d (%d names)", r, c, len(d.Names))
	}
	if d.Names[10] != "target" || d.Names[0] != "age" {
		t.Errorf("want names age..target, got %q", d.Names)
	}
	// First data row: 59,2,32.1,101,157,93.2,38,4,4.8598,87,151.
	if d.X.At(0, 0) != 59 || d.X.At(0, 8) != 4.8598 || d.X.At(0, 10) != 151 {
		t.Errorf("first row: got %v", mat.Row(nil, 0, d.X))
	}
}
