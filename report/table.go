package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/pipeline"
)

// besideEstimator is the estimator whose VI the first table shows in a
// column beside the first estimator's (where both ran): dropout, free,
// whose excess over lazy's shows the correlation bias at a glance.
const besideEstimator = "dropout"

// estimatorOrder returns the estimators of the results in their order.
func estimatorOrder(res []inference.Result) []string {
	var out []string
	for _, r := range res {
		if !slices.Contains(out, r.Estimator) {
			out = append(out, r.Estimator)
		}
	}
	return out
}

// byEstimator returns the results of estimator e, in the given feature
// order where order is not nil (features not in it last, as they come).
func byEstimator(res []inference.Result, e string, order []string) []inference.Result {
	var out []inference.Result
	for _, r := range res {
		if r.Estimator == e {
			out = append(out, r)
		}
	}
	if order != nil {
		slices.SortStableFunc(out, func(a, b inference.Result) int {
			return rank(order, a.Feature) - rank(order, b.Feature)
		})
	}
	return out
}

// rank is feature f's place in order, len(order) when absent.
func rank(order []string, f string) int {
	if i := slices.Index(order, f); i >= 0 {
		return i
	}
	return len(order)
}

// importanceOrder is the features of rs (one estimator's results) from
// the largest VI to the smallest, ties in their order.
func importanceOrder(rs []inference.Result) []string {
	sorted := slices.Clone(rs)
	slices.SortStableFunc(sorted, func(a, b inference.Result) int {
		switch {
		case a.VI > b.VI:
			return -1
		case a.VI < b.VI:
			return 1
		}
		return 0
	})
	out := make([]string, len(sorted))
	for i, r := range sorted {
		out[i] = r.Feature
	}
	return out
}

// writeResults writes the results as the answer to "what matters?": one
// row per feature of the first estimator's results (lazy by default),
// the most important first, with dropout's VI in a column beside it;
// then every other estimator in a block of its own, its rows in the
// first table's order; then the check (Report.Check).
func writeResults(w io.Writer, r *pipeline.Report) error {
	ests := estimatorOrder(r.Results)
	if len(ests) == 0 {
		return nil
	}
	first := ests[0]
	rows := byEstimator(r.Results, first, nil)
	order := importanceOrder(rows)
	rows = byEstimator(r.Results, first, order)
	var beside map[string]float64
	if first != besideEstimator && slices.Contains(ests, besideEstimator) {
		beside = map[string]float64{}
		for _, b := range byEstimator(r.Results, besideEstimator, nil) {
			beside[b.Feature] = b.VI
		}
	}
	caption := fmt.Sprintf("%s: each feature's VI, the most important first (%s)", first, reductionSeconds(rows))
	if beside != nil {
		caption += fmt.Sprintf("; %s: its VI with the feature set to its mean, biased up where features correlate", besideEstimator)
	}
	fmt.Fprintln(w, caption)
	if err := writeBlock(w, r, rows, beside); err != nil {
		return err
	}
	for _, e := range ests[1:] {
		if beside != nil && e == besideEstimator {
			continue
		}
		rs := byEstimator(r.Results, e, order)
		fmt.Fprintf(w, "\n%s: each feature's VI, in %s's order (%s)\n", e, first, reductionSeconds(rs))
		if err := writeBlock(w, r, rs, nil); err != nil {
			return err
		}
	}
	return writeCheck(w, r)
}

// reductionSeconds says how long the results' reductions took together.
func reductionSeconds(rs []inference.Result) string {
	var s float64
	for _, r := range rs {
		s += r.Seconds
	}
	return fmt.Sprintf("reductions %.2fs", s)
}

// writeBlock writes rows (one estimator's) in aligned columns: feature,
// vi, se, the interval, the p-values, lambda where the estimator reports
// it, and the beside column where given.
func writeBlock(w io.Writer, r *pipeline.Report, rows []inference.Result, beside map[string]float64) error {
	cols := []string{"vi", "se", "ci_low", "ci_high", "p_value"}
	if adjusted(r) {
		cols = append(cols, "p_adjusted")
	}
	lambda := slices.ContainsFunc(rows, func(res inference.Result) bool { return lambdaString(res, num) != "" })
	if lambda {
		cols = append(cols, "lambda")
	}
	if beside != nil {
		cols = append(cols, besideEstimator)
	}
	fw := len("feature")
	for _, res := range rows {
		fw = max(fw, len(res.Feature))
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%-*s\t%s\t\n", fw, "feature", strings.Join(cols, "\t"))
	for _, res := range rows {
		cells := []string{num(res.VI), num(res.SE), num(res.CILow), num(res.CIHigh)}
		cells = append(cells, pValues(r, res, pnum)...)
		if lambda {
			l := lambdaString(res, num)
			if l == "" {
				l = "-"
			}
			cells = append(cells, l)
		}
		if beside != nil {
			b, ok := beside[res.Feature]
			cells = append(cells, "-")
			if ok {
				cells[len(cells)-1] = num(b)
			}
		}
		fmt.Fprintf(tw, "%-*s\t%s\t\n", fw, res.Feature, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

// writeCheck writes the check of the first estimator against the
// reference on a few features (Report.Check): a summary line, then each
// feature's two VIs and their difference.
func writeCheck(w io.Writer, r *pipeline.Report) error {
	c := r.Check
	if c == nil || len(c.Results) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\ncheck: %s on the %d features %s ranks highest: %s's VI inside %s's interval for %d of %d; largest difference %s (%s %s se)\n",
		c.Estimator, len(c.Results), c.Of, c.Estimator, c.Of, c.Inside, len(c.Results), num(c.MaxDiff), num(c.MaxDiffSE), c.Of)
	of := map[string]inference.Result{}
	for _, res := range byEstimator(r.Results, c.Of, nil) {
		of[res.Feature] = res
	}
	fw := len("feature")
	for _, res := range c.Results {
		fw = max(fw, len(res.Feature))
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%-*s\t%s\t%s\tdifference\t%s's interval\t%s's p_value\t\n", fw, "feature", c.Of, c.Estimator, c.Of, c.Estimator)
	for _, res := range c.Results {
		o, ok := of[res.Feature]
		if !ok {
			continue
		}
		inside := "outside"
		if res.VI >= o.CILow && res.VI <= o.CIHigh {
			inside = "inside"
		}
		fmt.Fprintf(tw, "%-*s\t%s\t%s\t%s\t%s\t%s\t\n", fw, res.Feature, num(o.VI), num(res.VI), num(o.VI-res.VI), inside, pnum(res.PValue))
	}
	return tw.Flush()
}
