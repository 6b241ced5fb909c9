package dataio

import (
	"context"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// The Parquet files of testdata were written by Apache Arrow's Go
// implementation (testdata/parquetgen), with dictionary-encoded strings,
// nulls, several row groups, and snappy or zstd pages; mixed.csv holds the
// same cells. Read by this package's reader, each prepares into the data
// set the CSV file does, bit for bit.
func TestParquetFromArrowMatchesCSV(t *testing.T) {
	ctx := context.Background()
	csvTable, err := LoadTable(ctx, "testdata/mixed.csv")
	if err != nil {
		t.Fatal(err)
	}
	opt := PrepareOptions{Target: "y", Drop: []string{"id"}, Categorical: []string{"zone"}, Missing: MissingImpute}
	want, err := csvTable.Prepare(opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{"testdata/mixed_snappy.parquet", "testdata/mixed_zstd.parquet"} {
		t.Run(file, func(t *testing.T) {
			checkWrittenBy(t, file, map[string]format.CompressionCodec{"snappy": format.Snappy, "zstd": format.Zstd}[strings.TrimSuffix(strings.TrimPrefix(file, "testdata/mixed_"), ".parquet")])
			tab, err := LoadTable(ctx, file)
			if err != nil {
				t.Fatal(err)
			}
			if tab.Rows != 400 {
				t.Fatalf("%d rows, want 400", tab.Rows)
			}
			region, _ := tab.Column("region")
			if region.Kind != Text {
				t.Errorf("region is %s, want text", region.Kind)
			}
			if n, _ := region.MissingCount(tab.Rows); n == 0 {
				t.Error("region has no missing cells; the file has nulls")
			}
			got, err := tab.Prepare(opt)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Names, want.Names) {
				t.Fatalf("columns %v, want the CSV's %v", got.Names, want.Names)
			}
			r, c := want.X.Dims()
			for i := 0; i < r; i++ {
				for j := 0; j < c; j++ {
					a, b := got.X.At(i, j), want.X.At(i, j)
					if math.Float64bits(a) != math.Float64bits(b) && !(math.IsNaN(a) && math.IsNaN(b)) {
						t.Fatalf("row %d, column %s: %v, the CSV's %v", i+1, got.Names[j], a, b)
					}
				}
			}
			if DataFingerprint(got) != DataFingerprint(want) {
				t.Error("the fingerprints differ")
			}
		})
	}
}

// checkWrittenBy checks that the test file is what the test says it is:
// written by Arrow, every column chunk compressed with codec, the region
// column dictionary-encoded.
func checkWrittenBy(t *testing.T, path string, codec format.CompressionCodec) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	md := pf.Metadata()
	// Arrow's Go writer names itself "parquet-go version 18.x" and, with
	// pqarrow.WithStoreSchema, stores the Arrow schema beside Parquet's.
	arrowSchema := slices.ContainsFunc(md.KeyValueMetadata, func(kv format.KeyValue) bool { return kv.Key == "ARROW:schema" })
	if !strings.HasPrefix(md.CreatedBy, "parquet-go version 18.") || !arrowSchema {
		t.Errorf("created by %q (Arrow schema stored: %v), want Arrow's writer", md.CreatedBy, arrowSchema)
	}
	if len(md.RowGroups) < 2 {
		t.Errorf("%d row groups, want several", len(md.RowGroups))
	}
	for _, rg := range md.RowGroups {
		for _, cc := range rg.Columns {
			m := cc.MetaData
			if m.Codec != codec {
				t.Errorf("column %v: codec %v, want %v", m.PathInSchema, m.Codec, codec)
			}
			if slices.Equal(m.PathInSchema, []string{"region"}) && !slices.Contains(m.Encoding, format.RLEDictionary) && !slices.Contains(m.Encoding, format.PlainDictionary) {
				t.Errorf("region's encodings %v: not dictionary-encoded", m.Encoding)
			}
		}
	}
}

func TestParquetRefusesBadFiles(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/bad.parquet"
	if err := os.WriteFile(path, []byte("PAR1 not really"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadTable(context.Background(), path)
	if err == nil || !strings.Contains(err.Error(), "bad.parquet: not a readable Parquet file") {
		t.Fatalf("err = %v", err)
	}
}

// A timestamp column is read, but refused where a run uses it, naming it
// and how to leave it out; a string column, a boolean and
// an optional integer read as text (the empty string missing), 0/1 and
// numbers (null missing).
func TestParquetColumnKinds(t *testing.T) {
	type row struct {
		When time.Time `parquet:"when"`
		X    float64   `parquet:"x"`
		Y    float64   `parquet:"y"`
	}
	write := func(path string, rows []row) {
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		w := parquet.NewGenericWriter[row](f)
		if _, err := w.Write(rows); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	dir := t.TempDir()
	rows := []row{{X: 1, Y: 1}, {X: 2, Y: 2}}
	write(dir+"/t.parquet", rows)
	tab, err := LoadTable(context.Background(), dir+"/t.parquet")
	if err != nil {
		t.Fatalf("a file with a timestamp column: %v", err)
	}
	_, err = tab.Prepare(PrepareOptions{})
	if err == nil || !strings.Contains(err.Error(), `t.parquet, column "when": a TIMESTAMP`) || !strings.HasSuffix(err.Error(), "; or leave it out (--drop when)") || strings.Contains(err.Error(), "\n") {
		t.Errorf("the timestamp as a feature: err = %v", err)
	}
	if _, err = tab.Prepare(PrepareOptions{Target: "when"}); err == nil || !strings.HasSuffix(err.Error(), "; or name another response (--target)") {
		t.Errorf("the timestamp as the response: err = %v", err)
	}
	// Left out, it is no obstacle.
	if d, err := tab.Prepare(PrepareOptions{Drop: []string{"when"}}); err != nil || d.Names[0] != "x" {
		t.Errorf("the timestamp left out: %v", err)
	}

	type plain struct {
		Name  string  `parquet:"name"`
		Flag  bool    `parquet:"flag"`
		Count *int64  `parquet:"count,optional"`
		Y     float64 `parquet:"y"`
	}
	three := int64(3)
	f, err := os.Create(dir + "/p.parquet")
	if err != nil {
		t.Fatal(err)
	}
	w := parquet.NewGenericWriter[plain](f)
	if _, err := w.Write([]plain{{"a", true, &three, 1}, {"b", false, nil, 2}, {"", false, &three, 3}}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	f.Close()
	tab, err = LoadTable(context.Background(), dir+"/p.parquet")
	if err != nil {
		t.Fatal(err)
	}
	name, _ := tab.Column("name")
	flag, _ := tab.Column("flag")
	count, _ := tab.Column("count")
	if name.Kind != Text || !name.Missing(2) || name.Missing(0) {
		t.Errorf("name: %s, missing %v %v; want text, the empty string missing", name.Kind, name.Missing(0), name.Missing(2))
	}
	if flag.Kind != Numeric || !slices.Equal(flag.Numbers, []float64{1, 0, 0}) {
		t.Errorf("flag: %s %v, want numbers 1 0 0", flag.Kind, flag.Numbers)
	}
	if count.Kind != Numeric || !count.Missing(1) || count.Numbers[0] != 3 {
		t.Errorf("count: %s %v, want 3, null, 3", count.Kind, count.Numbers)
	}
}
