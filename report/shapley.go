package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"text/tabwriter"

	"github.com/lazyvi/lazyvi/workflows/shapley"
)

// WriteShapley writes a Shapley report to w in format: table, csv or json;
// lambda, when positive, is the fixed penalty of lazy that the table
// states.
func WriteShapley(w io.Writer, rep *shapley.Report, format string, lambda float64) error {
	switch format {
	case "json":
		return WriteJSON(w, rep)
	case "csv":
		return writeShapleyCSV(w, rep)
	}
	return writeShapleyTable(w, rep, lambda)
}

var shapleyColumns = []string{"feature", "estimator", "vi", "se", "ci_low", "ci_high", "p_value", "se_influence", "se_sampling", "seconds"}

// shapleyReportColumns are the CSV columns of rep: shapleyColumns, with
// p_adjusted after p_value when the p-values were adjusted.
func shapleyReportColumns(rep *shapley.Report) []string {
	if rep.Adjust == "" || rep.Adjust == "none" {
		return shapleyColumns
	}
	return slices.Concat(shapleyColumns[:7], []string{"p_adjusted"}, shapleyColumns[7:])
}

func writeShapleyCSV(w io.Writer, rep *shapley.Report) error {
	cw := csv.NewWriter(w)
	cols := shapleyReportColumns(rep)
	if err := cw.Write(cols); err != nil {
		return err
	}
	full := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, r := range rep.Results {
		rec := []string{r.Feature, r.Estimator, full(r.VI), full(r.SE), full(r.CILow), full(r.CIHigh), full(r.PValue)}
		if r.PAdjusted != nil {
			rec = append(rec, full(*r.PAdjusted))
		}
		rec = append(rec, full(r.SEInfluence), full(r.SESampling), strconv.FormatFloat(r.Seconds, 'f', 3, 64))
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func writeShapleyTable(w io.Writer, rep *shapley.Report, lambda float64) error {
	fmt.Fprintf(w, "measure %s  task %s  backend %s  n %d  n_train %d  n_eval %d  seed %d  level %g  adjust %s\n",
		rep.Measure, rep.Task, rep.Backend, rep.N, rep.NTrain, rep.NEval, rep.Seed, rep.Level, rep.Adjust)
	// An estimator whose model with all players is its own refit of the
	// full model (Grand) gives its own sum on its line below.
	except := ""
	if slices.ContainsFunc(rep.Estimators, func(s shapley.Summary) bool { return s.Grand != nil }) {
		except = " except where a line below says"
	}
	fmt.Fprintf(w, "full model: %s %s (trained in %.2fs); intercept-only: %s; the values sum to the difference %s%s\n",
		rep.Measure, num(readable(rep.Measure, rep.Full.Score)), rep.Full.Seconds, num(readable(rep.Measure, rep.Empty.Score)), num(rep.Full.Score-rep.Empty.Score), except)
	si := rep.Subsets
	switch {
	case si.Exact:
		fmt.Fprintf(w, "subsets: all %d of %d players (exact; no sampling error)\n", si.Enumerated, si.Players)
	case si.Fixed > 0:
		fmt.Fprintf(w, "subsets: %d of %d players, sizes %v enumerated (%d), the rest in sampled complement pairs; fixed at %d\n",
			si.Fixed, si.Players, si.Sizes, si.Enumerated, si.Fixed)
	default:
		fmt.Fprintf(w, "subsets: %d players, sizes %v enumerated (%d), the rest in sampled complement pairs until %s <= %g (at most %d)\n",
			si.Players, si.Sizes, si.Enumerated, si.Rule, si.Threshold, si.MaxSubsets)
	}
	for _, s := range rep.Estimators {
		extra := ""
		if s.Estimator == "shapley-lazy" {
			if lambda > 0 {
				extra = fmt.Sprintf(", lambda %g", lambda)
			} else {
				extra = ", lambda by CV per subset"
			}
			if s.NoUpdate > 0 {
				extra += fmt.Sprintf(", %d subsets without update", s.NoUpdate)
			}
		}
		if s.Grand != nil {
			extra += fmt.Sprintf("; with all players its own refit of the full model scores %s, so its values sum to %s", num(*s.Grand), num(s.Sum))
		}
		conv := "exact"
		if !si.Exact {
			fig := "inf"
			if s.Figure != nil {
				fig = num(*s.Figure)
			}
			conv = fmt.Sprintf("%d pairs, converged %v (%s %s)", s.Pairs, s.Converged, si.Rule, fig)
		}
		fmt.Fprintf(w, "%s: %.2fs, %d subsets, %s%s\n", s.Estimator, s.Seconds, s.Subsets, conv, extra)
	}
	fmt.Fprintln(w)
	fw, ew := len("feature"), len("estimator")
	for _, r := range rep.Results {
		fw = max(fw, len(r.Feature))
		ew = max(ew, len(r.Estimator))
	}
	adj := rep.Adjust != "" && rep.Adjust != "none"
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', tabwriter.AlignRight)
	head := "shapley\tse\tci_low\tci_high\tp_value\t"
	if adj {
		head += "p_adj\t"
	}
	fmt.Fprintf(tw, "%-*s\t%-*s\t%sse_inf\tse_samp\t\n", fw, "feature", ew, "estimator", head)
	for _, r := range rep.Results {
		p := pnum(r.PValue) + "\t"
		if adj && r.PAdjusted != nil {
			p += pnum(*r.PAdjusted) + "\t"
		}
		fmt.Fprintf(tw, "%-*s\t%-*s\t%s\t%s\t%s\t%s\t%s%s\t%s\t\n", fw, r.Feature, ew, r.Estimator,
			num(r.VI), num(r.SE), num(r.CILow), num(r.CIHigh), p, num(r.SEInfluence), num(r.SESampling))
	}
	return tw.Flush()
}
