// Command parquetgen writes the Parquet test files of package dataio with
// Apache Arrow's Go implementation (pqarrow), an implementation
// independent of the reader dataio uses, and the same data as CSV:
//
//	cd dataio/testdata/parquetgen && go run . ..
//
// The data: 400 rows, seeded, with an ID column, two numeric features
// (x1 important, x2 not) with null cells, a dictionary-encoded text
// column (region, important, with nulls), an integer-coded category
// (zone, important), a boolean (flag, not important) and the response y.
// mixed_snappy.parquet has snappy pages, mixed_zstd.parquet zstd pages,
// both in row groups of 150 rows with dictionary encoding on; mixed.csv
// holds the same cells (a null is an empty cell).
package main

import (
	"encoding/csv"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

const rows = 400

type row struct {
	id         int64
	x1, x2     float64
	x1ok, x2ok bool
	region     string // "" for null
	zone       int32
	flag       bool
	y          float64
}

func main() {
	dir := "."
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	data := generate()
	if err := writeCSV(filepath.Join(dir, "mixed.csv"), data); err != nil {
		fail(err)
	}
	for name, codec := range map[string]compress.Compression{
		"mixed_snappy.parquet": compress.Codecs.Snappy,
		"mixed_zstd.parquet":   compress.Codecs.Zstd,
	} {
		if err := writeParquet(filepath.Join(dir, name), data, codec); err != nil {
			fail(err)
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "parquetgen:", err)
	os.Exit(1)
}

// generate draws the rows: y = 2 x1 + region effect + 1.5 (zone is 3) -
// (zone is 5) + noise, with about 2% of x1, x2 and region null.
func generate() []row {
	rng := rand.New(rand.NewPCG(44, 1))
	regions := []string{"north", "south", "east", "west"}
	effect := map[string]float64{"north": 1.5, "south": -1, "east": 0, "west": 0.5}
	out := make([]row, rows)
	for i := range out {
		r := row{id: int64(1000 + i), x1: round(rng.NormFloat64()), x2: round(rng.NormFloat64()), x1ok: true, x2ok: true,
			region: regions[rng.IntN(4)], zone: int32(1 + rng.IntN(5)), flag: rng.IntN(2) == 1}
		r.y = 2*r.x1 + effect[r.region] + 0.3*rng.NormFloat64()
		switch r.zone {
		case 3:
			r.y += 1.5
		case 5:
			r.y -= 1
		}
		r.y = round(r.y)
		r.x1ok = rng.Float64() >= 0.02
		r.x2ok = rng.Float64() >= 0.02
		if rng.Float64() < 0.02 {
			r.region = ""
		}
		out[i] = r
	}
	return out
}

// round keeps 6 decimals, so that the CSV text and the double agree.
func round(x float64) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'f', 6, 64), 64)
	return v
}

func writeCSV(path string, data []row) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	w.Write([]string{"id", "x1", "x2", "region", "zone", "flag", "y"})
	num := func(x float64, ok bool) string {
		if !ok {
			return ""
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	for _, r := range data {
		flag := "0"
		if r.flag {
			flag = "1"
		}
		w.Write([]string{strconv.FormatInt(r.id, 10), num(r.x1, r.x1ok), num(r.x2, r.x2ok), r.region,
			strconv.Itoa(int(r.zone)), flag, num(r.y, true)})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func writeParquet(path string, data []row, codec compress.Compression) error {
	mem := memory.DefaultAllocator
	dictType := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "x1", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "x2", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "region", Type: dictType, Nullable: true},
		{Name: "zone", Type: arrow.PrimitiveTypes.Int32},
		{Name: "flag", Type: arrow.FixedWidthTypes.Boolean},
		{Name: "y", Type: arrow.PrimitiveTypes.Float64},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for _, r := range data {
		b.Field(0).(*array.Int64Builder).Append(r.id)
		appendFloat(b.Field(1).(*array.Float64Builder), r.x1, r.x1ok)
		appendFloat(b.Field(2).(*array.Float64Builder), r.x2, r.x2ok)
		db := b.Field(3).(*array.BinaryDictionaryBuilder)
		if r.region == "" {
			db.AppendNull()
		} else if err := db.AppendString(r.region); err != nil {
			return err
		}
		b.Field(4).(*array.Int32Builder).Append(r.zone)
		b.Field(5).(*array.BooleanBuilder).Append(r.flag)
		b.Field(6).(*array.Float64Builder).Append(r.y)
	}
	rec := b.NewRecord()
	defer rec.Release()
	tbl := array.NewTableFromRecords(schema, []arrow.Record{rec})
	defer tbl.Release()
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	props := parquet.NewWriterProperties(parquet.WithCompression(codec), parquet.WithDictionaryDefault(true),
		parquet.WithMaxRowGroupLength(150))
	if err := pqarrow.WriteTable(tbl, f, 150, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema())); err != nil {
		f.Close()
		return err
	}
	return nil // WriteTable closes f
}

func appendFloat(b *array.Float64Builder, x float64, ok bool) {
	if ok {
		b.Append(x)
	} else {
		b.AppendNull()
	}
}
