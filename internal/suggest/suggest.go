// Package suggest finds the known name nearest to a mistyped one, for the
// "did you mean" of an error message.
package suggest

import "strings"

// Nearest returns the candidate nearest to name (case-insensitive edit
// distance), or "" when none is near enough to be a likely typo: at most a
// third of the longer name's length away, or one that starts with name
// (a prefix such as --estimator for --estimators). Ties go to the first
// candidate.
func Nearest(name string, candidates []string) string {
	best, bestD := "", -1
	lname := strings.ToLower(name)
	for _, c := range candidates {
		lc := strings.ToLower(c)
		d := distance(lname, lc)
		if d > max(len(lname), len(lc))/3 && !(len(lname) >= 3 && strings.HasPrefix(lc, lname)) {
			continue
		}
		if bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// DidYouMean is "; did you mean X?" for the candidate nearest to name, or
// "" when there is none (see Nearest).
func DidYouMean(name string, candidates []string, quote func(string) string) string {
	s := Nearest(name, candidates)
	if s == "" {
		return ""
	}
	if quote != nil {
		s = quote(s)
	}
	return "; did you mean " + s + "?"
}

// distance is the Levenshtein distance between a and b, in bytes.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
