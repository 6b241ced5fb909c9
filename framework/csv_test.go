package framework

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

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
		{"Inf", "a,b\n1,-Inf\n", 2, "b", "infinite value is not allowed"},
		{"overflow", "a,b\n1,1e400\n", 2, "b", "infinite value"},
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
		if !errors.Is(err, ErrUsage) {
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

func TestLoadCSVMissing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nope.csv")
	_, err := LoadCSV(path)
	var ie *InputError
	if !errors.As(err, &ie) || !errors.Is(err, ErrUsage) {
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
	_, err := LoadCSV(path)
	if err == nil || err.Error() != path+`: row 3, column "x": not a number: "foo"` {
		t.Errorf("got %v", err)
	}
}

func TestColumnUnknown(t *testing.T) {
	d := &Dataset{Source: "d.csv", Names: []string{"a", "b", "y"}}
	_, err := d.Column("z")
	var ie *InputError
	if !errors.As(err, &ie) || !errors.Is(err, ErrUsage) {
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

	d, err := LoadCSV(path)
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
