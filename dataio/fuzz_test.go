package dataio

import (
	"bytes"
	"encoding/csv"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"

	"github.com/lazyvi/lazyvi/framework"
)

// The fuzz targets of the input parsers. Their seed corpora are the test
// files under testdata/ (real data sets, cut short, and spreadsheet
// exports, in testdata/seed) and the cases below; `go test -fuzz FuzzReadCSV ./framework`
// (one target at a time) searches further. The model files' and the shard
// reports' targets are in fuzz_files_test.go: errors that are one-line
// *InputErrors, and parse-print-parse round trips, for every reader.

// maxErrLen bounds an error message about fuzzed input of any size: the
// source's name, the row and column, and cells cut short (quote).
const maxErrLen = 512

// checkInputError fails unless err is a one-line, short *InputError
// about source (matching ErrUsage).
func checkInputError(t *testing.T, err error, source string) {
	t.Helper()
	var ie *InputError
	if !errors.As(err, &ie) || !errors.Is(err, framework.ErrUsage) {
		t.Fatalf("want an *InputError, got %T %v", err, err)
	}
	s := err.Error()
	if ie.File != source || !strings.HasPrefix(s, source+": ") {
		t.Fatalf("error does not name %s: %q", source, s)
	}
	checkOneLine(t, s)
}

func checkOneLine(t *testing.T, s string) {
	t.Helper()
	if strings.ContainsAny(s, "\r\n") || len(s) > maxErrLen {
		t.Fatalf("error is not one short line (%d bytes): %.600q", len(s), s)
	}
}

func addFiles(f *testing.F, pattern string) {
	files, err := filepath.Glob(filepath.Join("testdata", "seed", pattern))
	if err != nil || len(files) == 0 {
		f.Fatalf("no seed files testdata/seed/%s (%v)", pattern, err)
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

func FuzzReadCSV(f *testing.F) {
	addFiles(f, "*.csv")
	for _, s := range []string{
		"\ufeff\"a\",\"b\",\"y\"\r\n1,0.25,-3e3\r\n4,5,6\r\n",
		"a,b,y\r1,2,3\r4,5,6\r",
		"a , b\n 1 ,+.5e-3\n\n-0,1.\n",
		"a,b\n1_000,0x1p-2\n", "a,b\nInf,NaN\n", "a,b\n1e400,1\n", "a,\"b\nc\"\n1,2\n",
		"1,2\n3,4\n", "a,a\n1,2\n", "a,b\n1\n", "a,b\n\"1,5\",2\n", "a\n1\n", "",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		const source = "fuzz.csv"
		d, err := ReadCSV(bytes.NewReader(data), source)
		// The result does not depend on how the reads are cut.
		d1, err1 := ReadCSV(iotest.OneByteReader(bytes.NewReader(data)), source)
		if (err == nil) != (err1 == nil) || err != nil && err.Error() != err1.Error() || err == nil && !sameDataset(d, d1) {
			t.Fatalf("one byte a read gives another result: %v / %v", err, err1)
		}
		if err != nil {
			checkInputError(t, err, source)
			return
		}
		checkDataset(t, d)
		// Print it as encoding/csv writes and read it again: the same
		// names and bit for bit the same numbers.
		var buf bytes.Buffer
		w := csv.NewWriter(&buf)
		w.Write(d.Names)
		r, c := d.X.Dims()
		rec := make([]string, c)
		for i := 0; i < r; i++ {
			for j := range rec {
				rec[j] = strconv.FormatFloat(d.X.At(i, j), 'g', -1, 64)
			}
			w.Write(rec)
		}
		w.Flush()
		d2, err := ReadCSV(&buf, source)
		if err != nil {
			t.Fatalf("printed data set does not read back: %v", err)
		}
		if !sameDataset(d, d2) {
			t.Fatalf("round trip changed the data set: names %q -> %q", d.Names, d2.Names)
		}
	})
}

// checkDataset checks what ReadCSV promises of a data set it returns.
func checkDataset(t *testing.T, d *Dataset) {
	t.Helper()
	r, c := d.X.Dims()
	if r < 1 || c < 1 || c != len(d.Names) {
		t.Fatalf("shape %d x %d with %d names", r, c, len(d.Names))
	}
	seen := map[string]bool{}
	numeric := true
	for _, n := range d.Names {
		if n == "" || n != trimField(n) || seen[n] || !utf8.ValidString(n) || strings.ContainsRune(n, 0) {
			t.Fatalf("bad or repeated name %q in %q", n, d.Names)
		}
		seen[n] = true
		numeric = numeric && isDecimal(n)
	}
	if numeric {
		t.Fatalf("a header of numbers was taken: %q", d.Names)
	}
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			if v := d.X.At(i, j); math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("cell %d, %d is %v", i, j, v)
			}
		}
	}
}

// sameDataset reports equal names and bit-identical cells.
func sameDataset(a, b *Dataset) bool {
	ar, ac := a.X.Dims()
	br, bc := b.X.Dims()
	if ar != br || ac != bc || !reflect.DeepEqual(a.Names, b.Names) {
		return false
	}
	for i := 0; i < ar; i++ {
		for j := 0; j < ac; j++ {
			if math.Float64bits(a.X.At(i, j)) != math.Float64bits(b.X.At(i, j)) {
				return false
			}
		}
	}
	return true
}

func FuzzParseGroups(f *testing.F) {
	for _, s := range []string{
		"climate=sst1,sst2;demog=age,sex", " climate = sst1, sst2 ;demog=age,sex;", "a=x", "a=b=c;d=e",
		"", ";", "a", "=x", "a=", "a=x,x", "a=,,x,", "g=" + strings.Repeat("c,", 100),
		"row0=p00,p01;row1=p10,p11", "\ufeffa=b", "a\n=b\t,c",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		gs, err := ParseGroups(spec)
		if err != nil {
			if !errors.Is(err, framework.ErrUsage) {
				t.Fatalf("want a usage error, got %T %v", err, err)
			}
			checkOneLine(t, err.Error())
			return
		}
		checkGroups(t, gs, "=;", ",;")
		parts := make([]string, len(gs))
		for i, g := range gs {
			parts[i] = g.Name + "=" + strings.Join(g.Columns, ",")
		}
		again, err := ParseGroups(strings.Join(parts, ";"))
		if err != nil || !reflect.DeepEqual(again, gs) {
			t.Fatalf("round trip: %q -> %q, %v", gs, again, err)
		}
	})
}

func FuzzReadGroups(f *testing.F) {
	addFiles(f, "*.groups")
	for _, s := range []string{
		"# groups\nclimate: sst1, sst2\n\ndemog: age,sex\n", "\ufeffa: x\r\nb: y, z\r\n", "a: x\rb: y\r",
		"a: x\nb x\n", "a:\n", ": x\n", "a: x, x\n", "#only a comment\n", "", "a: b: c, d\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		const source = "fuzz.groups"
		gs, err := ReadGroups(bytes.NewReader(data), source)
		if err != nil {
			checkInputError(t, err, source)
			return
		}
		checkGroups(t, gs, ":\n\r", ",\n\r")
		for _, g := range gs {
			if strings.HasPrefix(g.Name, "#") {
				t.Fatalf("a comment line was taken for group %q", g.Name)
			}
		}
		var buf bytes.Buffer
		for _, g := range gs {
			buf.WriteString(g.Name + ": " + strings.Join(g.Columns, ", ") + "\n")
		}
		again, err := ReadGroups(&buf, source)
		if err != nil || !reflect.DeepEqual(again, gs) {
			t.Fatalf("round trip: %q -> %q, %v", gs, again, err)
		}
	})
}

// checkGroups checks what the groups parsers promise: at least one group,
// names and columns trimmed and non-empty, names without the characters
// nameSep, columns without colSep, no column twice in a group.
func checkGroups(t *testing.T, gs []Group, nameSep, colSep string) {
	t.Helper()
	if len(gs) == 0 {
		t.Fatal("no groups and no error")
	}
	for _, g := range gs {
		if g.Name == "" || g.Name != trimField(g.Name) || strings.ContainsAny(g.Name, nameSep) || len(g.Columns) == 0 {
			t.Fatalf("bad group %q", g)
		}
		seen := map[string]bool{}
		for _, c := range g.Columns {
			if c == "" || c != trimField(c) || strings.ContainsAny(c, colSep) || seen[c] {
				t.Fatalf("bad column %q in group %q", c, g)
			}
			seen[c] = true
		}
	}
}

// FuzzReadTable: any CSV input reads as a table, or fails with an
// *InputError naming the file; a table prepares with every missing-value
// policy into a data set of finite numbers (NaN only in imputed feature
// cells) or fails so; one feature per column of the file.
func FuzzReadTable(f *testing.F) {
	addFiles(f, "*.csv")
	for _, s := range []string{
		"id,a,c,y\n1,2,p,3\n2,,q,4\n3,5,,6\n4,x,p,1\n",
		"a,c,y\n1,NA,2\n2,N/A,3\nnull,NaN,1\n", "a,y\n1e400,1\n2,2\n", "c,y\nx,1\ny,\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		const source = "fuzz.csv"
		tab, err := ReadTable(bytes.NewReader(data), source)
		if err != nil {
			checkInputError(t, err, source)
			return
		}
		for _, m := range []MissingPolicy{MissingError, MissingDrop, MissingImpute} {
			d, err := tab.Prepare(PrepareOptions{Missing: m})
			if err != nil {
				var ie *InputError
				if !errors.As(err, &ie) || ie.File != source || !strings.HasPrefix(err.Error(), source) {
					t.Fatalf("%s: want an *InputError naming %s, got %T %v", m, source, err, err)
				}
				checkOneLine(t, err.Error())
				continue
			}
			r, c := d.X.Dims()
			if c != len(d.Names) || r == 0 {
				t.Fatalf("%s: %d x %d data set for %d names", m, r, c, len(d.Names))
			}
			units, err := ResolveUnits(d.Names[:c-1], d.Units(), d.Names[c-1], nil, false)
			if err != nil || len(units) != len(tab.Columns)-1 {
				t.Fatalf("%s: %d features for %d columns: %v", m, len(units), len(tab.Columns)-1, err)
			}
			for i := 0; i < r; i++ {
				for j := 0; j < c; j++ {
					v := d.X.At(i, j)
					if math.IsInf(v, 0) || math.IsNaN(v) && (m != MissingImpute || j == c-1) {
						t.Fatalf("%s: row %d, column %s: %v", m, i, d.Names[j], v)
					}
				}
			}
		}
	})
}
