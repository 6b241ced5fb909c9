package dataio

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func readTable(t *testing.T, text string) *Table {
	t.Helper()
	tab, err := ReadTable(strings.NewReader(text), "d.csv")
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

const mixedCSV = `id,age,region,zone,y
1,30,north,2,1.5
2,,south,1,2.5
3,41,,3,0.5
4,52,north,2,1
5,28,east,,2
`

func TestReadTableKinds(t *testing.T) {
	tab := readTable(t, mixedCSV)
	kinds := map[string]ColumnKind{}
	for _, c := range tab.Columns {
		kinds[c.Name] = c.Kind
	}
	if kinds["region"] != Text || kinds["age"] != Numeric || kinds["zone"] != Numeric {
		t.Fatalf("kinds %v", kinds)
	}
	age, _ := tab.Column("age")
	if n, first := age.MissingCount(tab.Rows); n != 1 || !slices.Equal(first, []int{1}) {
		t.Errorf("age: %d missing, first %v", n, first)
	}
}

// Without a policy, every column with missing cells is named with its
// count, in one error.
func TestPrepareMissingErrorNamesEveryColumn(t *testing.T) {
	_, err := readTable(t, mixedCSV).Prepare(PrepareOptions{})
	if err == nil {
		t.Fatal("no error")
	}
	want := `d.csv: 3 missing cells in 3 columns: "age" 1 (row 3), "region" 1 (row 4), "zone" 1 (row 6); drop the rows`
	if !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("err = %v\nwant prefix %s", err, want)
	}
}

func TestPrepareDrop(t *testing.T) {
	d, err := readTable(t, mixedCSV).Prepare(PrepareOptions{Missing: MissingDrop, Drop: []string{"id"}})
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := d.X.Dims(); r != 2 || !slices.Equal(d.Encoding.Rows, []int{0, 3}) {
		t.Fatalf("%d rows kept (%v), want rows 1 and 4", r, d.Encoding.Rows)
	}
	// Only the categories of the rows kept.
	want := []string{"age", "region=north", "zone", "y"}
	if !slices.Equal(d.Names, want) {
		t.Fatalf("names %v, want %v", d.Names, want)
	}
}

func TestPrepareImpute(t *testing.T) {
	d, err := readTable(t, mixedCSV).Prepare(PrepareOptions{Missing: MissingImpute, Drop: []string{"id"}, Categorical: []string{"zone"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"age", "age:missing", "region=east", "region=north", "region=south", "region:missing",
		"zone=1", "zone=2", "zone=3", "zone:missing", "y"}
	if !slices.Equal(d.Names, want) {
		t.Fatalf("names %v, want %v", d.Names, want)
	}
	units := d.Units()
	if len(units) != 3 || units[1].Name != "region" || len(units[1].Columns) != 4 {
		t.Fatalf("units %v", units)
	}
	// Row 2 (0-based 1): age missing.
	if !math.IsNaN(d.X.At(1, 0)) || d.X.At(1, 1) != 1 {
		t.Errorf("row 2: age %v, indicator %v", d.X.At(1, 0), d.X.At(1, 1))
	}
	feats, err := ResolveUnits(d.Names[:len(d.Names)-1], units, "y", nil, false)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range feats {
		names = append(names, f.Name)
	}
	if !slices.Equal(names, []string{"age", "region", "zone"}) || !slices.Equal(feats[1].Columns, []int{2, 3, 4, 5}) {
		t.Fatalf("features %v", feats)
	}
	// Explicit groups name the file's columns.
	feats, err = ResolveUnits(d.Names[:len(d.Names)-1], units, "y", []Group{{Name: "place", Columns: []string{"region", "zone"}}}, false)
	if err != nil || len(feats) != 2 || len(feats[0].Columns) != 8 {
		t.Fatalf("grouped: %v, %v", feats, err)
	}
}

// The imputation is fitted on the training rows only: a mean and a most
// frequent category of theirs, and categories they lack get indicators 0.
func TestFitFillOnTrainingRows(t *testing.T) {
	d, err := readTable(t, `a,c,y
1,p,0
3,p,1
,q,0
100,,1
,r,0
`).Prepare(PrepareOptions{Missing: MissingImpute})
	if err != nil {
		t.Fatal(err)
	}
	names := d.Names[:len(d.Names)-1] // a a:missing c=p c=q c=r c:missing
	x := mat.DenseCopyOf(d.X.Slice(0, 5, 0, len(names)))
	train := mat.DenseCopyOf(x.Slice(0, 3, 0, len(names)))
	eval := mat.DenseCopyOf(x.Slice(3, 5, 0, len(names)))
	f, err := d.Encoding.FitFill("d.csv", names, train)
	if err != nil {
		t.Fatal(err)
	}
	f.Apply(train)
	f.Apply(eval)
	if got := train.At(2, 0); got != 2 {
		t.Errorf("a imputed with %v, want 2 (the training rows' mean, not the 100 of an evaluation row)", got)
	}
	// Row 4: c missing: the training rows' mode p.
	if got := mat.Row(nil, 0, eval)[2:6]; !slices.Equal(got, []float64{1, 0, 0, 1}) {
		t.Errorf("row 4's c = %v, want p and missing", got)
	}
	// Row 5: c = r, never seen in training: every indicator 0.
	if got := mat.Row(nil, 1, eval)[2:6]; !slices.Equal(got, []float64{0, 0, 0, 0}) {
		t.Errorf("row 5's c = %v, want all 0 (unseen)", got)
	}
}

// Every bad selection is reported at once, with the nearest names.
func TestPrepareColumnSelectionErrors(t *testing.T) {
	_, err := readTable(t, mixedCSV).Prepare(PrepareOptions{Missing: MissingDrop,
		Features: []string{"agee", "reg*", "q*"}, Drop: []string{"idd"}, Categorical: []string{"zon"}})
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{`features: no column "agee"`, `did you mean "age"?`, `features: no column matches "q*"`, `drop: no column "idd"`, `did you mean "id"?`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v\nmissing %q", err, want)
		}
	}
	_, err = readTable(t, mixedCSV).Prepare(PrepareOptions{Missing: MissingDrop, Categorical: []string{"zon"}})
	if err == nil || !strings.Contains(err.Error(), `categorical: no column "zon"`) || !strings.Contains(err.Error(), `did you mean "zone"?`) {
		t.Errorf("err = %v", err)
	}
	d, err := readTable(t, mixedCSV).Prepare(PrepareOptions{Missing: MissingDrop, Features: []string{"a*", "zone"}})
	if err != nil || !slices.Equal(d.Names, []string{"age", "zone", "y"}) {
		t.Errorf("glob selection: %v, %v", d, err)
	}
}

// Bad cells of every numeric column are reported at once, the first few
// of each.
func TestPrepareBadCells(t *testing.T) {
	var b strings.Builder
	b.WriteString("a,b,y\n")
	for i := 0; i < 20; i++ {
		a, bb := "1", "2"
		if i%4 == 0 {
			a = `"1,5"`
		}
		if i == 7 {
			bb = "x"
		}
		b.WriteString(a + "," + bb + ",3\n")
	}
	_, err := readTable(t, b.String()).Prepare(PrepareOptions{})
	want := `d.csv: 2 columns have cells that are not numbers in columns of numbers: "a": 5 cells are not a number (row 2: not a number: "1,5" (the decimal separator is '.', and numbers have no thousands separators), row 6: `
	if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), `"b": 1 cell is not a number (row 9: not a number: "x")`) {
		t.Fatalf("err = %v", err)
	}
	// Named categorical, a column of mixed cells is categories.
	if _, err := readTable(t, b.String()).Prepare(PrepareOptions{Categorical: []string{"a", "b"}}); err != nil {
		t.Fatal(err)
	}
}

func TestPrepareRefusesIdentifiers(t *testing.T) {
	var b strings.Builder
	b.WriteString("name,y\n")
	for i := 0; i < 50; i++ {
		b.WriteString("p" + strings.Repeat("x", i) + "," + string(rune('0'+i%2)) + "\n")
	}
	_, err := readTable(t, b.String()).Prepare(PrepareOptions{})
	if err == nil || !strings.Contains(err.Error(), "50 categories in 50 rows: an identifier") || !strings.Contains(err.Error(), "--drop name") {
		t.Fatalf("err = %v", err)
	}
}

func TestPrepareTextResponse(t *testing.T) {
	_, err := readTable(t, "a,y\n1,yes\n2,no\n").Prepare(PrepareOptions{})
	if err == nil || !strings.Contains(err.Error(), `d.csv: row 2, column "y": not a number: "yes"; the response must be numbers`) {
		t.Fatalf("err = %v", err)
	}
}

func TestJoinTables(t *testing.T) {
	train := readTable(t, "a,c,y\n1,p,0\n2,q,1\n")
	eval, err := ReadTable(strings.NewReader("a,c,y\n3,r,0\n,p,1\n"), "e.csv")
	if err != nil {
		t.Fatal(err)
	}
	j, err := JoinTables(train, eval)
	if err != nil {
		t.Fatal(err)
	}
	_, err = j.Prepare(PrepareOptions{})
	if err == nil || !strings.Contains(err.Error(), `"a" 1 (e.csv row 3)`) {
		t.Fatalf("err = %v", err)
	}
	d, err := j.Prepare(PrepareOptions{Missing: MissingImpute})
	if err != nil || !slices.Equal(d.Names, []string{"a", "a:missing", "c=p", "c=q", "c=r", "y"}) {
		t.Fatalf("%v, %v", d, err)
	}
}

// A missing response is never imputed: impute refuses it, drop leaves
// its row out.
func TestPrepareMissingResponse(t *testing.T) {
	const text = "a,y\n1,2\n2,\n3,4\n"
	_, err := readTable(t, text).Prepare(PrepareOptions{Missing: MissingImpute})
	if err == nil || !strings.Contains(err.Error(), `the response has missing cells: "y" 1 (row 3)`) {
		t.Fatalf("err = %v", err)
	}
	d, err := readTable(t, text).Prepare(PrepareOptions{Missing: MissingDrop})
	if err != nil {
		t.Fatal(err)
	}
	if got := mat.Col(nil, 1, d.X); !slices.Equal(got, []float64{2, 4}) {
		t.Errorf("responses %v, want 2 4", got)
	}
}

// A joined table's data set says which file each row came from, the rows
// --missing drop left out counted.
func TestPreparedJoinLocatesRows(t *testing.T) {
	train := readTable(t, "a,y\n1,2\n,3\n4,5\n")
	eval, err := ReadTable(strings.NewReader("a,y\n,1\n7,8\n"), "e.csv")
	if err != nil {
		t.Fatal(err)
	}
	j, err := JoinTables(train, eval)
	if err != nil {
		t.Fatal(err)
	}
	d, err := j.Prepare(PrepareOptions{Missing: MissingDrop})
	if err != nil {
		t.Fatal(err)
	}
	if want := []Part{{"d.csv", 0}, {"e.csv", 2}}; !slices.Equal(d.Parts, want) {
		t.Errorf("parts %v, want %v", d.Parts, want)
	}
	if f, r := d.Locate(1); f != "d.csv" || r != 4 {
		t.Errorf("row 1 is %s row %d, want d.csv row 4", f, r)
	}
	if f, r := d.Locate(2); f != "e.csv" || r != 3 {
		t.Errorf("row 2 is %s row %d, want e.csv row 3", f, r)
	}
	if _, err := JoinTables(train, readTable(t, "a,y\n1,2\n,3\n4,5\n")); err == nil || !strings.Contains(err.Error(), "the evaluation data are the training data") {
		t.Errorf("same cells: %v", err)
	}
}

// TestPrepareBadCellsBounded: bad cells in many columns, with long values
// and the decimal-separator hint, still make one short line that says how
// many columns it leaves out.
func TestPrepareBadCellsBounded(t *testing.T) {
	const cols = 40
	var b strings.Builder
	for j := 0; j < cols; j++ {
		fmt.Fprintf(&b, "column_with_a_rather_long_name_%02d,", j)
	}
	b.WriteString("y\n")
	long := `"` + strings.Repeat("1,5", 30) + `"`
	for i := 0; i < 6; i++ {
		for j := 0; j < cols; j++ {
			if i%2 == 0 {
				b.WriteString(long + ",")
			} else {
				b.WriteString("1,")
			}
		}
		b.WriteString("3\n")
	}
	_, err := readTable(t, b.String()).Prepare(PrepareOptions{})
	if err == nil {
		t.Fatal("no error for 40 columns of bad cells")
	}
	if s := err.Error(); len(s) > 512 || strings.ContainsAny(s, "\r\n") || !strings.Contains(s, "more;") {
		t.Fatalf("error is not one short line naming how many more (%d bytes): %s", len(s), s)
	}
}
