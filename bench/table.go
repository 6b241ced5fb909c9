package bench

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteTable writes the runs as tables: per run, each estimator's
// features, wall time, throughput and error, then where its time went, and
// what the columns are.
func WriteTable(w io.Writer, runs []Report) {
	for k, run := range runs {
		if k > 0 {
			io.WriteString(w, "\n")
		}
		epochs := ""
		if run.Epochs > 0 {
			epochs = fmt.Sprintf("  epochs %d", run.Epochs)
		}
		backend := ""
		if run.Backend != "" {
			backend = "  backend " + run.Backend
		}
		width := ""
		if run.Width != "" {
			width = "  width " + run.Width
		}
		fmt.Fprintf(w, "case %s%s  n %d  p %d%s%s  workers %d  full model %.2fs\n\n", run.Case, backend, run.N, run.P, width, epochs, run.Workers, run.FullSeconds)
		tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "estimator\tfeatures\ttotal s\ts/feature\tmedian s\terror\t")
		for _, r := range run.Results {
			e := "-"
			if r.ErrorMean != nil {
				e = fmt.Sprintf("%.4g (vs %s)", *r.ErrorMean, r.ErrorAgainst)
			}
			fmt.Fprintf(tw, "%s\t%d\t%.3f\t%.4f\t%.4f\t%s\t\n", r.Estimator, r.Features, r.SecondsTotal, r.SecondsPerFeature, r.SecondsPerFeatureMedian, e)
		}
		tw.Flush()
		writeSteps(w, run.Results)
		for _, r := range run.Results {
			if r.Flops > 0 {
				fmt.Fprintf(w, "\n%s at scale: penalty on %d rows; %d Krylov steps (the final solves and any search on all the rows), %.1f GFlop counted, %.2f GFLOP/s of its features' wall time\n",
					r.Estimator, r.CVRows, r.KrylovSteps, r.Flops/1e9, r.GFlopsRate)
			}
		}
	}
	if len(runs) > 0 {
		fmt.Fprintf(w, "\n%s\n", columns(runs[0].Workers))
	}
}

// columns says what the speed table's columns are.
func columns(workers int) string {
	return fmt.Sprintf(`total s: wall time over the features, %d at a time (--workers); s/feature: total s / features, the throughput;
median s: the median of each feature's own wall time, above s/feature when features run in parallel;
error: mean |VI - truth| over the features, or |VI - retrain's VI| where the truth is unknown (lower is better)`, workers)
}

// writeSteps writes, per estimator, where its time went: each step's
// share of the steps' seconds and the rate of its counted flops ("-" where
// none are counted), and the rate of all its counted flops.
func writeSteps(w io.Writer, results []Result) {
	any := false
	for _, r := range results {
		any = any || len(r.Steps) > 0
	}
	if !any {
		return
	}
	fmt.Fprintln(w, "\nwhere the time goes (share of each estimator's step seconds; GFLOP/s of the flops counted):")
	for _, r := range results {
		if len(r.Steps) == 0 {
			continue
		}
		parts := make([]string, len(r.Steps))
		for i, st := range r.Steps {
			rate := "-"
			if st.GFlops > 0 {
				rate = fmt.Sprintf("%.2f GFLOP/s", st.GFlops)
			}
			parts[i] = fmt.Sprintf("%s %.0f%% (%s)", st.Name, 100*st.Share, rate)
		}
		overall := "no flops counted"
		if r.StepsGFlops > 0 {
			overall = fmt.Sprintf("%.2f GFLOP/s counted", r.StepsGFlops)
		}
		fmt.Fprintf(w, "  %s: %s; %s\n", r.Estimator, strings.Join(parts, ", "), overall)
	}
}
