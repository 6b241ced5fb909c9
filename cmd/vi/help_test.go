package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateReference = flag.Bool("update", false, "rewrite docs/cli.md from the commands' help")

// cliReference is docs/cli.md: every command's long help, in help order.
func cliReference(cmds []*Command) string {
	var b bytes.Buffer
	b.WriteString("# vi: the command reference\n\n")
	b.WriteString("Every command's synopsis, usage, examples, description and flags, as\n")
	b.WriteString("`vi help --long COMMAND` prints them (`vi help COMMAND` leaves out the\n")
	b.WriteString("description). Generated: `go test ./cmd/vi -run TestCLIReference -update`.\n")
	for _, c := range cmds {
		fmt.Fprintf(&b, "\n## vi %s\n\n%s.\n\n", c.Name(), upperFirst(c.Short))
		fmt.Fprintf(&b, "```text\nvi %s\n```\n", c.UsageLine)
		if ex := commandExamples[c.Name()]; len(ex) > 0 {
			fmt.Fprintf(&b, "\nExamples:\n\n```sh\n%s\n```\n", strings.Join(ex, "\n"))
		}
		fmt.Fprintf(&b, "\n```text\n%s\n```\n", strings.TrimSpace(c.Long))
		var flags bytes.Buffer
		printFlags(&flags, &c.Flag)
		if flags.Len() > 0 {
			fmt.Fprintf(&b, "\nFlags:\n\n```text\n%s```\n", flags.String())
		}
	}
	return b.String()
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// TestCLIReference: docs/cli.md is what the commands' help says.
func TestCLIReference(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "cli.md")
	want := cliReference(newCommands())
	if *updateReference {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("docs/cli.md is not the commands' help; run: go test ./cmd/vi -run TestCLIReference -update")
	}
}

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
