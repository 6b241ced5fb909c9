package dataio

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/internal/suggest"
)

// Group names a set of columns whose importance is measured together: all
// of them are dropped at once. Columns are names of the data set's columns
// (not the response).
type Group struct {
	Name    string
	Columns []string
}

// ParseGroups parses the command line's group syntax, groups separated by
// ';', each "name=col,col":
//
//	climate=sst1,sst2;demog=age,sex
//
// Spaces around names are ignored. It checks the syntax only; ResolveFeatures
// checks the names against a data set.
func ParseGroups(spec string) ([]Group, error) {
	var out []Group
	for _, part := range strings.Split(spec, ";") {
		if trimField(part) == "" {
			continue
		}
		name, cols, ok := strings.Cut(part, "=")
		if !ok {
			return nil, framework.Usagef("want name=col,col;name=col,... got %s", Quote(trimField(part)))
		}
		g, err := newGroup(name, cols, ",")
		if err != nil {
			return nil, framework.Usagef("%w", err)
		}
		out = append(out, g)
	}
	if len(out) == 0 {
		return nil, framework.Usagef("no groups in %s", Quote(spec))
	}
	return out, nil
}

// ReadGroups reads groups from r, one a line: "name: col, col". Blank lines
// and lines starting with '#' are skipped; lines may end in \n, \r\n or \r,
// and a leading UTF-8 byte order mark is dropped. source names r in errors,
// which are *InputErrors naming the line (as the row).
func ReadGroups(r io.Reader, source string) ([]Group, error) {
	var out []Group
	sc := bufio.NewScanner(textReader(r))
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	line := 0
	for sc.Scan() {
		line++
		s := trimField(sc.Text())
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		name, cols, ok := strings.Cut(s, ":")
		if !ok {
			return nil, &InputError{File: source, Row: line, Msg: fmt.Sprintf("want \"name: col, col\", got %s", Quote(s))}
		}
		g, err := newGroup(name, cols, ",")
		if err != nil {
			return nil, &InputError{File: source, Row: line, Msg: err.Error()}
		}
		out = append(out, g)
	}
	if err := sc.Err(); err != nil {
		return nil, &InputError{File: source, Row: line + 1, Msg: "read error: " + err.Error()}
	}
	if len(out) == 0 {
		return nil, &InputError{File: source, Msg: "no groups (want one \"name: col, col\" a line)"}
	}
	return out, nil
}

// LoadGroups reads a groups file (see ReadGroups); the path Stdin ("-")
// reads standard input. Like LoadCSV it returns as soon as ctx is done.
func LoadGroups(ctx context.Context, path string) ([]Group, error) {
	return LoadFile(ctx, path, ReadGroups)
}

func newGroup(name, cols, sep string) (Group, error) {
	g := Group{Name: trimField(name)}
	if g.Name == "" {
		return Group{}, fmt.Errorf("a group without a name (columns %s)", Quote(trimField(cols)))
	}
	seen := map[string]bool{}
	for _, c := range strings.Split(cols, sep) {
		c = trimField(c)
		if c == "" {
			continue
		}
		if seen[c] {
			return Group{}, fmt.Errorf("group %s names column %s twice", Quote(g.Name), Quote(c))
		}
		seen[c] = true
		g.Columns = append(g.Columns, c)
	}
	if len(g.Columns) == 0 {
		return Group{}, fmt.Errorf("group %s has no columns", Quote(g.Name))
	}
	return g, nil
}

// OneHotGroups groups the columns that share a prefix ending in '_', the
// way one-hot encoders name a categorical variable's indicators
// (color_red, color_blue: group "color"). Each column takes the longest
// such prefix that at least one other column shares, so "blood_type_A" and
// "blood_type_B" form "blood_type" beside a lone "blood_pressure"; a prefix
// left with a single column is no group. Groups come in the order of their
// first column; columns in no group are not returned.
func OneHotGroups(names []string) []Group {
	count := map[string]int{}
	for _, n := range names {
		for _, p := range prefixes(n) {
			count[p]++
		}
	}
	members := map[string][]string{}
	var order []string
	for _, n := range names {
		best := ""
		for _, p := range prefixes(n) {
			if count[p] >= 2 && len(p) > len(best) {
				best = p
			}
		}
		if best == "" {
			continue
		}
		if _, ok := members[best]; !ok {
			order = append(order, best)
		}
		members[best] = append(members[best], n)
	}
	var out []Group
	for _, p := range order {
		if len(members[p]) >= 2 {
			out = append(out, Group{Name: p, Columns: members[p]})
		}
	}
	return out
}

// prefixes returns every non-empty prefix of name that ends just before an
// underscore followed by more text: "a_b_c" -> "a", "a_b".
func prefixes(name string) []string {
	var out []string
	for i := 1; i < len(name)-1; i++ {
		if name[i] == '_' {
			out = append(out, name[:i])
		}
	}
	return out
}

// ResolveFeatures turns groups of column names into Features over the
// design matrix whose columns are names (the data set's columns without the
// response). The explicit groups come first, in the order given; then, with
// onehot, the one-hot groups of the columns left over (OneHotGroups); then
// every column in no group, alone, in file order. A column may belong to
// several explicit groups. Without groups and onehot it returns one Feature
// per column, as Problem.Features does. Unknown columns, the response
// (target, "" if unknown) and names that collide are usage errors.
func ResolveFeatures(names []string, target string, groups []Group, onehot bool) ([]framework.Feature, error) {
	return ResolveUnits(names, nil, target, groups, onehot)
}

// ResolveUnits is ResolveFeatures over units, named sets of the columns
// names that act as one column (an encoded data set's, Dataset.Units: a
// categorical column's indicators, a column and its missingness
// indicator): groups name units, and a column in no unit is a unit of its
// own. Nil units make it ResolveFeatures.
func ResolveUnits(names []string, units []Group, target string, groups []Group, onehot bool) ([]framework.Feature, error) {
	index := make(map[string]int, len(names))
	for j, n := range names {
		index[n] = j
	}
	unitNames, unitCols, err := resolveUnitColumns(names, index, units)
	if err != nil {
		return nil, err
	}
	unitIndex := make(map[string]int, len(unitNames))
	for u, n := range unitNames {
		unitIndex[n] = u
	}
	var out []framework.Feature
	used := map[string]bool{} // result names
	grouped := map[int]bool{} // units in some group
	add := func(name string, us []int) error {
		if used[name] {
			return framework.Usagef("groups: the name %s is used twice (a group and a column or two groups; rename the group)", Quote(name))
		}
		used[name] = true
		var cols []int
		for _, u := range us {
			cols = append(cols, unitCols[u]...)
		}
		out = append(out, framework.Feature{Name: name, Columns: cols})
		return nil
	}
	for _, g := range groups {
		us := make([]int, 0, len(g.Columns))
		for _, c := range g.Columns {
			u, ok := unitIndex[c]
			if !ok {
				if c == target && target != "" {
					return nil, framework.Usagef("group %s: column %s is the response", Quote(g.Name), Quote(c))
				}
				return nil, framework.Usagef("group %s: no column %s%s%s", Quote(g.Name), Quote(c), haveNames(unitNames), suggest.DidYouMean(c, unitNames, Quote))
			}
			us = append(us, u)
			grouped[u] = true
		}
		if err := add(g.Name, us); err != nil {
			return nil, err
		}
	}
	if onehot {
		var rest []string
		for u, n := range unitNames {
			if !grouped[u] {
				rest = append(rest, n)
			}
		}
		for _, g := range OneHotGroups(rest) {
			us := make([]int, len(g.Columns))
			for k, c := range g.Columns {
				us[k] = unitIndex[c]
				grouped[us[k]] = true
			}
			if err := add(g.Name, us); err != nil {
				return nil, err
			}
		}
	}
	for u, n := range unitNames {
		if !grouped[u] {
			if err := add(n, []int{u}); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// resolveUnitColumns returns the units' names and columns (indices into
// names) in the order of their first columns, every column in no unit a
// unit of its own.
func resolveUnitColumns(names []string, index map[string]int, units []Group) ([]string, [][]int, error) {
	unitOf := make([]int, len(names))
	for j := range unitOf {
		unitOf[j] = -1
	}
	cols := make([][]int, len(units))
	for u, g := range units {
		for _, c := range g.Columns {
			j, ok := index[c]
			if !ok {
				return nil, nil, fmt.Errorf("unit %s: no column %s", Quote(g.Name), Quote(c))
			}
			unitOf[j] = u
			cols[u] = append(cols[u], j)
		}
	}
	var outNames []string
	var outCols [][]int
	done := make([]bool, len(units))
	for j, n := range names {
		switch u := unitOf[j]; {
		case u < 0:
			outNames, outCols = append(outNames, n), append(outCols, []int{j})
		case !done[u]:
			done[u] = true
			outNames, outCols = append(outNames, units[u].Name), append(outCols, cols[u])
		}
	}
	return outNames, outCols, nil
}

func haveNames(names []string) string {
	if len(names) > 20 {
		return fmt.Sprintf(" (the data has %d feature columns)", len(names))
	}
	return " (have " + listNames(names) + ")"
}
