package dataio

import (
	"fmt"
	"path"
	"strings"

	"github.com/lazyvi/lazyvi/internal/suggest"
)

// noSuchColumn is the message for a column name that a file does not
// have: its columns when few, and the nearest name when it looks mistyped.
func noSuchColumn(name string, names []string) string {
	msg := fmt.Sprintf("no such column (the file has %d columns)", len(names))
	if len(names) <= 20 {
		msg = "no such column (have " + listNames(names) + ")"
	}
	return msg + suggest.DidYouMean(name, names, Quote)
}

// isPattern reports whether s is a glob pattern (path.Match's syntax)
// rather than a plain name.
func isPattern(s string) bool { return strings.ContainsAny(s, "*?[") }

// matchColumns returns, for each name or glob pattern of pats, the columns
// of names it matches (indices), and a message for each that matches none
// or is malformed. A plain name matches only itself.
func matchColumns(pats, names []string) (matched [][]int, bad []string) {
	for _, p := range pats {
		var cols []int
		for j, n := range names {
			ok := p == n
			if !ok && isPattern(p) {
				m, err := path.Match(p, n)
				if err != nil {
					bad = append(bad, fmt.Sprintf("%s is not a valid pattern (%v)", Quote(p), err))
					cols = nil
					break
				}
				ok = m
			}
			if ok {
				cols = append(cols, j)
			}
		}
		if len(cols) == 0 && (len(bad) == 0 || !strings.HasPrefix(bad[len(bad)-1], Quote(p))) {
			what := "no column"
			if isPattern(p) {
				what = "no column matches"
			}
			bad = append(bad, fmt.Sprintf("%s %s%s", what, Quote(p), suggest.DidYouMean(p, names, Quote)))
		}
		matched = append(matched, cols)
	}
	return matched, bad
}

// selectColumns returns which columns of names are features (besides the
// target): those that features names or matches (all when it is empty),
// less those that drop names or matches. Every name or pattern that
// matches no column, and a target left out, is reported in one error.
func selectColumns(source string, names []string, target int, features, drop []string) ([]bool, error) {
	keep := make([]bool, len(names))
	var bad []string
	if len(features) == 0 {
		for j := range keep {
			keep[j] = true
		}
	} else {
		m, b := matchColumns(features, names)
		bad = append(bad, prefixAll("features: ", b)...)
		for _, cols := range m {
			for _, j := range cols {
				keep[j] = true
			}
		}
	}
	m, b := matchColumns(drop, names)
	bad = append(bad, prefixAll("drop: ", b)...)
	for k, cols := range m {
		for _, j := range cols {
			if j == target {
				bad = append(bad, fmt.Sprintf("drop: %s leaves out the response %s", Quote(drop[k]), Quote(names[j])))
			}
			keep[j] = false
		}
	}
	if len(bad) > 0 {
		return nil, &InputError{File: source, Msg: strings.Join(bad, "; ")}
	}
	keep[target] = false
	return keep, nil
}

func prefixAll(prefix string, msgs []string) []string {
	for i := range msgs {
		msgs[i] = prefix + msgs[i]
	}
	return msgs
}
