package pipeline

import (
	"strings"
	"testing"

	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
)

// An evaluation row whose category no training row of its fold has is
// counted and named in the run's warnings.
func TestUnseenNote(t *testing.T) {
	tab, err := dataio.ReadTable(strings.NewReader("c,y\np,1\np,2\nq,3\nq,4\nr,5\n"), "u.csv")
	if err != nil {
		t.Fatal(err)
	}
	d, err := tab.Prepare(dataio.PrepareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	folds := []*framework.Problem{{EvalRows: []int{0, 4}}, {EvalRows: []int{2, 3}}}
	got := unseenNote(d, folds)
	want := "3 evaluation rows have a category that their models' training rows lack (c=r, c=q)"
	if !strings.HasPrefix(got, want) {
		t.Fatalf("note %q, want %q...", got, want)
	}
	if got := unseenNote(d, []*framework.Problem{{EvalRows: []int{0, 2}}}); got != "" {
		t.Errorf("every category seen in training, note %q", got)
	}
}
