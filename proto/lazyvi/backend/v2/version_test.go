package backendv2

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// TestVersion: Version is the version the .proto declares (its package
// lazyvi.backend.vN and its directory vN), so that generated code older
// than the .proto cannot go unnoticed.
func TestVersion(t *testing.T) {
	src, err := os.ReadFile("backend.proto")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^package lazyvi\.backend\.v([0-9]+);$`).FindSubmatch(src)
	if m == nil {
		t.Fatal("backend.proto: no line package lazyvi.backend.vN;")
	}
	want, _ := strconv.Atoi(string(m[1]))
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if dir := filepath.Base(wd); Version() != want || dir != "v"+strconv.Itoa(want) {
		t.Errorf("Version %d, backend.proto's package version %d, its directory %s: regenerate (go generate) or move the directory", Version(), want, dir)
	}
	for _, c := range []struct {
		pkg  string
		want int
	}{{"lazyvi.backend.v2", 2}, {"lazyvi.backend.v10", 10}, {"lazyvi.backend.v0", 0}, {"lazyvi.backend.v", 0}, {"lazyvi.backend", 0}, {"other.backend.v2", 0}} {
		if got := versionOf(c.pkg); got != c.want {
			t.Errorf("versionOf(%q) = %d, want %d", c.pkg, got, c.want)
		}
	}
}
