package lazyvi_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// TestDocLinks checks that every relative link of the README, docs/ and
// research/ names a file of the repository and, where it names a section
// of a Markdown file (#anchor), a heading of that file.
func TestDocLinks(t *testing.T) {
	files := []string{"README.md"}
	for _, dir := range []string{"docs", "research", "examples"} {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(path, ".md") {
				files = append(files, path)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	anchors := map[string]map[string]bool{}
	anchorsOf := func(path string) map[string]bool {
		if a, ok := anchors[path]; ok {
			return a
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		a := headingAnchors(string(b))
		anchors[path] = a
		return a
	}
	links := 0
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range markdownLink.FindAllStringSubmatch(withoutCode(string(b)), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			links++
			path, anchor, _ := strings.Cut(target, "#")
			if path == "" {
				path = file
			} else {
				path = filepath.Join(filepath.Dir(file), path)
			}
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s: link %q: %v", file, target, err)
				continue
			}
			if anchor != "" && strings.HasSuffix(path, ".md") && !anchorsOf(path)[anchor] {
				t.Errorf("%s: link %q: %s has no heading with anchor %q", file, target, path, anchor)
			}
		}
	}
	if links == 0 {
		t.Fatal("no relative links found: the check checks nothing")
	}
}

// markdownLink matches the target of an inline link or image,
// [text](target) or [text](target "title").
var markdownLink = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// fence and codeSpan match fenced code blocks and inline code, whose
// brackets are not links.
var (
	fence    = regexp.MustCompile("(?ms)^\\s*```.*?^\\s*```")
	codeSpan = regexp.MustCompile("`[^`\n]*`")
)

func withoutCode(s string) string {
	return codeSpan.ReplaceAllString(fence.ReplaceAllString(s, ""), "")
}

// headingAnchors returns the anchors GitHub gives a Markdown file's
// headings: lower case, punctuation dropped, spaces as hyphens, a repeated
// anchor numbered -1, -2, ...
func headingAnchors(s string) map[string]bool {
	a := map[string]bool{}
	seen := map[string]int{}
	for _, line := range strings.Split(withoutFences(s), "\n") {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		hashes := strings.TrimLeft(line, "#")
		if !strings.HasPrefix(hashes, " ") {
			continue
		}
		text := strings.TrimSpace(hashes)
		var b strings.Builder
		for _, r := range strings.ToLower(text) {
			switch {
			case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteRune('-')
			}
		}
		slug := b.String()
		if n := seen[slug]; n > 0 {
			a[slug+"-"+strconv.Itoa(n)] = true
		} else {
			a[slug] = true
		}
		seen[slug]++
	}
	return a
}

func withoutFences(s string) string { return fence.ReplaceAllString(s, "") }
