package plot

import (
	"fmt"
	"math"
	"strings"

	"github.com/lazyvi/lazyvi/pipeline"
	"github.com/lazyvi/lazyvi/workflows/shapley"
)

// measureWords say in words what a measure's values are, for axis labels:
// what it measures, whether smaller is better (a loss), and its units
// (%s: the response's name).
type measureWords struct {
	what  string
	loss  bool
	units string
}

// wordsOf returns a measure's words; a measure vi does not know is
// described by its name, larger being better (framework.Measure).
func wordsOf(measure string) measureWords {
	switch measure {
	case "mse":
		return measureWords{"mean squared error", true, "squared units of %s"}
	case "logloss":
		return measureWords{"log loss", true, "nats per row"}
	case "r2":
		return measureWords{"R²", false, "share of the variance of %s"}
	case "accuracy":
		return measureWords{"accuracy", false, "share of rows"}
	case "auc":
		return measureWords{"AUC", false, "probability"}
	}
	return measureWords{measure, false, ""}
}

// unitsOf returns the measure's units for the response target, with a
// leading space and in parentheses ("" when it has none).
func (m measureWords) unitsOf(target string) string {
	if m.units == "" {
		return ""
	}
	return " (" + m.unitsFor(target) + ")"
}

// unitsIn returns the measure's units for the response target followed by
// "; " ("" when it has none).
func (m measureWords) unitsIn(target string) string {
	if m.units == "" {
		return ""
	}
	return m.unitsFor(target) + "; "
}

func (m measureWords) unitsFor(target string) string {
	if target == "" {
		target = "the response"
	}
	if !strings.Contains(m.units, "%s") {
		return m.units
	}
	return fmt.Sprintf(m.units, target)
}

// viAxis labels the VI axis: VI is how much worse the measure gets
// without the feature.
func viAxis(measure, target string) string {
	m := wordsOf(measure)
	change := "decrease"
	if m.loss {
		change = "increase"
	}
	return fmt.Sprintf("VI: %s in %s without the feature\n%s", change, m.what, strings.TrimSpace(m.unitsOf(target)))
}

// shapleyAxis labels the Shapley value axis: the feature's share of what
// the full model gains over the intercept-only one.
func shapleyAxis(measure, target string) string {
	m := wordsOf(measure)
	gain := "gain in " + m.what
	if m.loss {
		gain = "reduction in " + m.what
	}
	return fmt.Sprintf("Shapley value: share of the %s\nover the intercept-only model%s", gain, m.unitsOf(target))
}

// levelPercent writes a confidence level as a percentage: 95, 99.5.
func levelPercent(level float64) string {
	return fmt.Sprintf("%g%%", math.Round(level*1000)/10)
}

// estimatePlot is the forest plot of a vi estimate report; target is the
// response's name.
func estimatePlot(rep *pipeline.Report, target string) forestPlot {
	pts := make([]forestPoint, len(rep.Results))
	for i, r := range rep.Results {
		pts[i] = forestPoint{r.Feature, r.Estimator, r.VI, r.CILow, r.CIHigh}
	}
	f := forestPlot{
		title:  fmt.Sprintf("Variable importance, %s intervals (%s, n_eval %d)", levelPercent(rep.Level), rep.Backend, rep.NEval),
		xLabel: viAxis(rep.Measure, target),
		value:  "VI",
		points: pts,
	}
	if rep.BiasAware {
		// Each interval is widened by its result's bias bound.
		f.notes = []string{"interval: bias-aware"}
	}
	return f
}

// shapleyPlot is the forest plot of a vi shapley report.
func shapleyPlot(rep *shapley.Report, target string) forestPlot {
	pts := make([]forestPoint, len(rep.Results))
	for i, r := range rep.Results {
		pts[i] = forestPoint{r.Feature, r.Estimator, r.VI, r.CILow, r.CIHigh}
	}
	return forestPlot{
		title:  fmt.Sprintf("Shapley values, %s intervals (%s, n_eval %d)", levelPercent(rep.Level), rep.Backend, rep.NEval),
		xLabel: shapleyAxis(rep.Measure, target),
		value:  "Shapley value",
		points: pts,
	}
}
