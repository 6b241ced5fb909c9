package backendv2

import (
	"strconv"
	"strings"
)

// Version returns the protocol's version: N of the proto package
// lazyvi.backend.vN that the code was generated from (0 if the package is
// not so named, which TestVersion rules out).
func Version() int {
	return versionOf(string(File_lazyvi_backend_v2_backend_proto.Package()))
}

// versionOf is N of a proto package name lazyvi.backend.vN, N > 0, or 0.
func versionOf(pkg string) int {
	v, ok := strings.CutPrefix(pkg, "lazyvi.backend.v")
	n, err := strconv.Atoi(v)
	if !ok || err != nil || n <= 0 {
		return 0
	}
	return n
}
