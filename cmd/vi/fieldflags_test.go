package main

import (
	"flag"
	"testing"

	"github.com/lazyvi/lazyvi/internal/flagmsg"
)

// TestFieldFlags: every setting that FieldError names in the library maps
// to a flag that vi estimate, shapley or roar has.
func TestFieldFlags(t *testing.T) {
	have := map[string]bool{}
	for _, c := range newCommands() {
		c.Flag.VisitAll(func(f *flag.Flag) { have["--"+f.Name] = true })
	}
	for field, name := range flagmsg.FieldFlags {
		if !have[name] {
			t.Errorf("%s maps to %s, which no command has", field, name)
		}
	}
}
