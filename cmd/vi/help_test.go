package main

import (
	"flag"
	"strings"
	"testing"
)

// TestCommandExamples: every command has examples, at least three where
// it takes flags, and each parses: a known command (and bench case),
// known flags with valid values.
func TestCommandExamples(t *testing.T) {
	for _, c := range newCommands() {
		ex := commandExamples[c.Name()]
		var nflags int
		c.Flag.VisitAll(func(*flag.Flag) { nflags++ })
		if len(ex) == 0 || (nflags > 0 && len(ex) < 3) {
			t.Errorf("vi %s: %d examples", c.Name(), len(ex))
		}
	}
	for name, ex := range commandExamples {
		for _, line := range ex {
			words := strings.Fields(line)
			if len(words) < 2 || words[0] != "vi" || words[1] != name {
				t.Errorf("%s: example %q is not of vi %s", name, line, name)
				continue
			}
			cmds := newCommands()
			var c *Command
			for _, cc := range cmds {
				if cc.Name() == name {
					c = cc
				}
			}
			if c == nil {
				t.Errorf("%q: no command %s", line, name)
				continue
			}
			args := words[2:]
			if name == "bench" {
				var bc *benchCase
				for _, b := range benchCases {
					if b.Name == args[0] {
						bc = b
					}
				}
				if bc == nil {
					t.Errorf("%q: no bench case %s", line, args[0])
					continue
				}
				fs := flag.NewFlagSet("bench "+bc.Name, flag.ContinueOnError)
				bc.Setup(fs)
				if err := fs.Parse(args[1:]); err != nil {
					t.Errorf("%q: %v", line, err)
				}
				continue
			}
			if err := c.Flag.Parse(args); err != nil {
				t.Errorf("%q: %v", line, err)
			}
		}
	}
}

// TestHelpShape: vi help CMD starts with the synopsis, then the usage and
// the examples; --long adds the description.
func TestHelpShape(t *testing.T) {
	dir := t.TempDir()
	short := viOK(t, dir, "help", "estimate")
	if !strings.HasPrefix(short, "vi estimate: estimate variable importance from a CSV file\n\nusage: vi estimate ") ||
		!strings.Contains(short, "\nExamples:\n  vi estimate --data lin.csv --target y\n") {
		t.Errorf("vi help estimate:\n%s", short)
	}
	if strings.Contains(short, "Inference: by default") {
		t.Errorf("vi help estimate holds the description:\n%s", short)
	}
	long := viOK(t, dir, "help", "--long", "estimate")
	if !strings.Contains(long, "Inference: by default") || !strings.Contains(long, "--plot file") {
		t.Errorf("vi help --long estimate lacks the description or a flag:\n%s", long)
	}
}
