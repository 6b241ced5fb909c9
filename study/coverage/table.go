package coverage

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"gonum.org/v1/gonum/stat"

	"github.com/lazyvi/lazyvi/inference"
)

// summarise is result k (estimator e, feature f) of candidate c over the
// repetitions, with feature f's truth in each.
func summarise(results [][][]inference.Result, truths [][]float64, k, c, f int, name string, level float64) Row {
	var vis, ses []float64
	var cover, reject, incoherent int
	first := results[0][c][k]
	known := !math.IsNaN(truths[0][f])
	var truthSum float64
	for r, rr := range results {
		res := rr[c][k]
		vis = append(vis, res.VI)
		ses = append(ses, res.SE)
		truth := truths[r][f]
		truthSum += truth
		if known && res.CILow <= truth && truth <= res.CIHigh {
			cover++
		}
		if res.PValue < 0.05 {
			reject++
		}
		if !Coherent(res, level) {
			incoherent++
		}
	}
	reps := float64(len(results))
	mean := stat.Mean(vis, nil)
	sd := 0.0 // one repetition has no spread
	if len(vis) > 1 {
		sd = stat.StdDev(vis, nil)
	}
	row := Row{Candidate: name, Estimator: first.Estimator, Feature: first.Feature,
		MeanVI: mean, SDVI: sd, MeanSE: stat.Mean(ses, nil), Reject05: float64(reject) / reps,
		Incoherent: float64(incoherent) / reps}
	if known {
		truth := truthSum / reps
		bias, cov := mean-truth, float64(cover)/reps
		row.Truth, row.Bias, row.Coverage = &truth, &bias, &cov
	}
	return row
}

// WriteTable writes the summary (per candidate and estimator: the
// coverage range over the features of known truth, the largest null
// rejection rate, the power per signal feature) and then every row.
func (r *Report) WriteTable(w io.Writer) {
	head := fmt.Sprintf("setting %s", r.Setting)
	if r.Data != "" {
		head += fmt.Sprintf("  data %s  signal %g", r.Data, r.Signal)
		if r.Copy > 0 {
			head += fmt.Sprintf("  copy %g", r.Copy)
		}
	} else {
		head += fmt.Sprintf("  rho %g", r.Rho)
	}
	fmt.Fprintf(w, "coverage  %s  n %d  reps %d  crossfit %d  repeats %d  level %g  measure %s  (%.0fs)\n",
		head, r.N, r.Reps, r.CrossFit, r.Repeats, r.Level, r.Measure, r.Seconds)
	if len(r.Kinds) > 0 {
		var ks []string
		for _, k := range slices.Sorted(maps.Keys(r.Kinds)) {
			ks = append(ks, fmt.Sprintf("%s %d", k, r.Kinds[k]))
		}
		fmt.Fprintf(w, "full models chosen: %s\n", strings.Join(ks, ", "))
	}
	fmt.Fprintln(w)

	type key struct{ cand, est string }
	var order []key
	byKey := map[key][]Row{}
	for _, row := range r.Rows {
		k := key{row.Candidate, row.Estimator}
		if _, ok := byKey[k]; !ok {
			order = append(order, k)
		}
		byKey[k] = append(byKey[k], row)
	}
	var signals []string
	for _, row := range byKey[order[0]] {
		if row.Truth != nil && *row.Truth > 0 {
			signals = append(signals, row.Feature)
		}
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "candidate\testimator\tincoherent\tcover min\tcover max\tnull p<.05 max\t| power:\t%s\t\n", strings.Join(signals, "\t"))
	for _, k := range order {
		lo, hi, nullMax, incoherent := math.Inf(1), math.Inf(-1), 0.0, 0.0
		var power []string
		for _, row := range byKey[k] {
			incoherent = math.Max(incoherent, row.Incoherent)
			if row.Coverage == nil {
				continue
			}
			lo, hi = math.Min(lo, *row.Coverage), math.Max(hi, *row.Coverage)
			if *row.Truth == 0 {
				nullMax = math.Max(nullMax, row.Reject05)
			} else {
				power = append(power, fmt.Sprintf("%.2f", row.Reject05))
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%.2f\t%.2f\t%.2f\t%.2f\t|\t%s\t\n", k.cand, k.est, incoherent, lo, hi, nullMax, strings.Join(power, "\t"))
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "candidate\testimator\tfeature\ttruth\tcover\tbias\tsd(vi)\tmean se\tp<.05\t")
	opt := func(p *float64, f string) string {
		if p == nil {
			return "-"
		}
		return fmt.Sprintf(f, *p)
	}
	for _, row := range r.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%.4g\t%.4g\t%.2f\t\n", row.Candidate, row.Estimator, row.Feature,
			opt(row.Truth, "%.4g"), opt(row.Coverage, "%.2f"), opt(row.Bias, "%+.4g"), row.SDVI, row.MeanSE, row.Reject05)
	}
	tw.Flush()
}

// Coherent reports whether a result's interval contains its estimate and
// lies above 0 exactly when its one-sided p-value (of H0: VI <= 0) is
// below (1 - level)/2.
func Coherent(r inference.Result, level float64) bool {
	return r.CILow <= r.VI && r.VI <= r.CIHigh && (r.CILow > 0) == (r.PValue < (1-level)/2)
}
