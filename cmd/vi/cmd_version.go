package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// newVersionCommand makes "vi version", which prints the version.
func newVersionCommand() *Command {
	return listCommand(&Command{
		UsageLine: "version",
		Short:     "print the version",
		Long:      `Version prints vi's module version and the Go toolchain that built it.`,
	}, printVersion)
}

func printVersion(w io.Writer) error {
	fmt.Fprintf(w, "vi %s %s %s/%s\n", version(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}

// version returns the main module's version and, when the build recorded
// it, the VCS revision.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = "+dirty"
			}
		}
	}
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		v += " " + rev + modified
	}
	return v
}
