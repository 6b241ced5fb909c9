package plot_test

import (
	"bytes"
	"fmt"
	"image/png"
	"log"
	"os"
	"path/filepath"

	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/pipeline"
	"github.com/lazyvi/lazyvi/plot"
)

// Draw the forest plot of an estimate report into a PNG file (a report of
// vi estimate --format json reads into a pipeline.Report as well).
func ExampleForest() {
	rep := &pipeline.Report{RunInfo: pipeline.RunInfo{Measure: "mse", Backend: "mlp", Level: 0.95, NEval: 500}, Results: []inference.Result{
		{Feature: "x1", Estimator: "lazy", VI: 0.46, CILow: 0.41, CIHigh: 0.52},
		{Feature: "x1", Estimator: "retrain", VI: 0.45, CILow: 0.39, CIHigh: 0.51},
		{Feature: "x2", Estimator: "lazy", VI: 0.27, CILow: 0.22, CIHigh: 0.33},
		{Feature: "x2", Estimator: "retrain", VI: 0.28, CILow: 0.22, CIHigh: 0.34},
		{Feature: "x3", Estimator: "lazy", VI: 0.01, CILow: -0.02, CIHigh: 0.04},
		{Feature: "x3", Estimator: "retrain", VI: 0.00, CILow: -0.03, CIHigh: 0.03},
	}}
	dir, err := os.MkdirTemp("", "plot")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "vi.png")
	if err := plot.Forest(rep, "y").Save(path); err != nil {
		log.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("a PNG", img.Bounds().Dx() >= 800, "pixels wide or more")
	// Output: a PNG true pixels wide or more
}

// A figure's file format comes from its extension.
func ExampleFormat() {
	for _, path := range []string{"vi.png", "vi.SVG", "report.pdf", "vi.bmp"} {
		f, err := plot.Format(path)
		fmt.Printf("%s: %q %v\n", path, f, err)
	}
	// Output:
	// vi.png: "png" <nil>
	// vi.SVG: "svg" <nil>
	// report.pdf: "pdf" <nil>
	// vi.bmp: "" vi.bmp: want a .png, .svg or .pdf file
}
