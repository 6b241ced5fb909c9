package lazyvi_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestREADMEGoExample compiles the README's Go example against this
// module: its imports, and its statements as the body of a function that
// has ctx. go vet type-checks it, so a change of the API that the README
// does not follow fails here.
func TestREADMEGoExample(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go vet")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := goBlock.FindAllStringSubmatch(string(b), -1)
	if len(blocks) != 1 {
		t.Fatalf("README.md has %d Go blocks, want 1", len(blocks))
	}
	imports, body, ok := strings.Cut(blocks[0][1], ")\n")
	if !ok || !strings.HasPrefix(imports, "import (") {
		t.Fatalf("README.md's Go block does not start with an import block:\n%s", blocks[0][1])
	}
	src := "package main\n\n" + imports + "\n\t\"context\"\n\t\"fmt\"\n\t\"log\"\n)\n\n" +
		"func main() {\n\tctx := context.Background()\n\t_ = ctx\n" + body + "}\n"
	// The package lives in the module (under testdata/, which ./...
	// patterns skip) so that its imports resolve to this checkout.
	if err := os.MkdirAll("testdata", 0o755); err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("testdata", "readme-example-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		os.RemoveAll(dir)
		os.Remove("testdata") // only if empty
	})
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(goTool, "vet", "./"+filepath.ToSlash(dir)).CombinedOutput()
	if err != nil {
		t.Fatalf("README.md's Go example does not compile: %v\n%s\n%s", err, out, src)
	}
}

var goBlock = regexp.MustCompile("(?s)```go\n(.*?)```")
