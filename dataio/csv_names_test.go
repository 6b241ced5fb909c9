package dataio

import (
	"errors"
	"strings"
	"testing"

	"github.com/lazyvi/lazyvi/framework"
)

// TestHeaderNamesRefused: a header name that is not valid UTF-8 (which
// JSON would write as U+FFFD, so that two names can become one) or holds
// a NUL is an input error naming the column, its bytes escaped.
func TestHeaderNamesRefused(t *testing.T) {
	for _, c := range []struct{ csv, want string }{
		{"a\xff,a\xfe,y\n1,2,3\n", `u.csv: row 1: column 1 of the header is not valid UTF-8: "a\xff"`},
		{"a,b\x00c,y\n1,2,3\n", `u.csv: row 1: column 2 of the header has a NUL character: "b\x00c"`},
	} {
		_, err := ReadCSV(strings.NewReader(c.csv), "u.csv")
		if err == nil || !errors.Is(err, framework.ErrUsage) || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: err %v, want %q", c.csv, err, c.want)
		}
	}
}

// TestLongNamesCutInMessages: a 1 MB column name is cut in the lists of
// names that errors show, as cells are.
func TestLongNamesCutInMessages(t *testing.T) {
	big := strings.Repeat("n", 1<<20)
	d, err := ReadCSV(strings.NewReader("a,"+big+",y\n1,2,3\n"), "b.csv")
	if err != nil {
		t.Fatal(err)
	}
	_, err = d.Column("zz")
	if err == nil || len(err.Error()) > maxErrLen || !strings.Contains(err.Error(), "(have a, \"nnnn") || !strings.Contains(err.Error(), "(1048576 bytes), y)") {
		t.Errorf("Column: err %.300v (%d bytes)", err, len(err.Error()))
	}
	_, err = ResolveFeatures([]string{"a", big}, "y", []Group{{Name: "g", Columns: []string{"zz"}}}, false)
	if err == nil || len(err.Error()) > maxErrLen || !strings.Contains(err.Error(), "(1048576 bytes))") {
		t.Errorf("groups: err %.300v (%d bytes)", err, len(err.Error()))
	}
}
