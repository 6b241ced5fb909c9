package lazyvi_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/lazyvi/lazyvi"

// TestLayers checks the direction of the module's imports in its non-test
// code: no program links package testing through lazyvi, estimators sit
// below the pipeline that runs them (the workflows above it), and
// framework names none of the packages built on it.
func TestLayers(t *testing.T) {
	imports := nonTestImports(t)
	if len(imports["framework"]) == 0 || len(imports["pipeline"]) == 0 {
		t.Fatalf("found no imports of framework or pipeline: is the test run from the module root?")
	}
	for pkg, imps := range imports {
		for _, imp := range imps {
			switch {
			case imp == "testing":
				t.Errorf("%s imports testing outside its tests", pkg)
			case strings.HasPrefix(pkg, "estimators") && imp == module+"/pipeline":
				t.Errorf("%s imports pipeline: estimators sit below it", pkg)
			case pkg == "framework" && strings.HasPrefix(imp, module+"/"):
				t.Errorf("framework imports %s: it names none of the packages built on it", imp)
			}
		}
	}
}

// nonTestImports returns the imports of the module's non-test Go files by
// package directory (relative to the module root, "." for the root).
func nonTestImports(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != "." && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		for _, imp := range f.Imports {
			p, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				return err
			}
			out[dir] = append(out[dir], p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
