package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/lazyvi/lazyvi/workflows/roar"
)

// WriteROAR writes a ROAR report to w in format: table, csv or json; ests
// orders the table's wall times.
func WriteROAR(w io.Writer, rep *roar.Report, format string, ests []string) error {
	switch format {
	case "json":
		return WriteJSON(w, rep)
	case "csv":
		cw := csv.NewWriter(w)
		// score is larger-is-better, as in JSON; a loss measure adds the
		// loss itself.
		loss := isLossNamed(rep.Measure)
		head := []string{"ordering", "fraction", "removed", "estimator", "score", "se", "seconds"}
		if loss {
			head = slices.Insert(head, 5, "loss")
		}
		grouped := rep.Groups > 0
		if grouped {
			head = slices.Insert(head, 3, "removed_columns")
		}
		if err := cw.Write(head); err != nil {
			return err
		}
		full := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
		for _, r := range rep.Results {
			rec := []string{r.Ordering, full(r.Fraction), strconv.Itoa(r.Removed), r.Estimator,
				full(r.Score), full(r.SE), strconv.FormatFloat(r.Seconds, 'f', 3, 64)}
			if loss {
				rec = slices.Insert(rec, 5, full(-r.Score))
			}
			if grouped {
				rec = slices.Insert(rec, 3, strconv.Itoa(r.Columns))
			}
			if err := cw.Write(rec); err != nil {
				return err
			}
		}
		cw.Flush()
		return cw.Error()
	}
	groups := ""
	if rep.Groups > 0 {
		groups = fmt.Sprintf("  groups %d", rep.Groups)
	}
	fmt.Fprintf(w, "measure %s  task %s  backend %s  n_train %d  n_eval %d  features %d%s  seed %d\n",
		rep.Measure, rep.Task, rep.Backend, rep.NTrain, rep.NEval, rep.Features, groups, rep.Seed)
	shown := func(score float64) float64 { return readable(rep.Measure, score) }
	fmt.Fprintf(w, "full model: %s %s (se %s)\n", rep.Measure, num(shown(rep.Full.Score)), num(rep.Full.SE))
	var secs []string
	for _, e := range ests {
		secs = append(secs, fmt.Sprintf("%s %.2fs", e, rep.Seconds[e]))
	}
	fmt.Fprintf(w, "wall time over the curve: %s\n\n", strings.Join(secs, ", "))
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "ordering\tfraction\tremoved\testimator\t%s\tse\tseconds\t\n", rep.Measure)
	for _, r := range rep.Results {
		fmt.Fprintf(tw, "%s\t%g\t%d\t%s\t%s\t%s\t%.2f\t\n", r.Ordering, r.Fraction, r.Removed, r.Estimator, num(shown(r.Score)), num(r.SE), r.Seconds)
	}
	return tw.Flush()
}
