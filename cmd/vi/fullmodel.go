package main

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/lazyvi/lazyvi"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/pipeline"
)

// autoHiddenBackend is the backend --hidden auto applies to.
const autoHiddenBackend = "mlp"

// hiddenAuto reads --hidden auto out of the backend options: true when it
// was given, or when the built-in mlp runs without --hidden; the option is
// then removed (each candidate sets its own).
func hiddenAuto(opts map[string]string, bk backendSpec) (bool, error) {
	v, set := opts["hidden"]
	builtinMLP := !bk.external() && bk.name == autoHiddenBackend
	if !set {
		return builtinMLP, nil
	}
	if !strings.EqualFold(strings.TrimSpace(v), "auto") {
		return false, nil
	}
	if !builtinMLP {
		return false, framework.Usagef("--hidden auto chooses among mlp architectures; backend %s needs explicit widths", bk.name)
	}
	delete(opts, "hidden")
	return true, nil
}

// fullModelConfig adds to cfg what chooses and judges the full model, as
// the library does (lazyvi.FullModelDefaults): one candidate per
// architecture of lazyvi.AutoHidden with --hidden auto, and the linear
// baseline (in this process) unless the backend is linear itself.
func (r *dataRun) fullModelConfig(cfg *pipeline.Config) {
	lazyvi.FullModelDefaults(cfg, r.backend.name, r.autoHidden)
}

// fullHidden returns the full model's hidden widths for the report: the
// chosen candidate's, else the option given, else the backend's default
// ("" for a backend without the option).
func fullHidden(rep *pipeline.Report, be framework.Backend, opts map[string]string) string {
	if rep.Full.Hidden != "" {
		return rep.Full.Hidden
	}
	if h, ok := opts["hidden"]; ok {
		return h
	}
	for _, o := range be.Options() {
		if o.Name == "hidden" {
			return o.Default
		}
	}
	return ""
}

// writeFullDiagnostics writes the table header's lines on the full model:
// its architecture and training, its R², and the baselines.
func writeFullDiagnostics(w io.Writer, r *pipeline.Report) {
	var parts []string
	if f := r.Full; f.Hidden != "" {
		h := "hidden " + f.Hidden
		switch {
		case f.Selection != "":
			h += " (auto: " + f.Selection + ")"
		case len(f.Candidates) > 1:
			names := make([]string, len(f.Candidates))
			for i, c := range f.Candidates {
				names[i] = c.Name
			}
			h += " (auto, of " + strings.Join(names, " | ") + ")"
		}
		parts = append(parts, h)
	}
	if r.Full.Architecture != "" {
		parts = append(parts, r.Full.Architecture)
	}
	if r.Full.Loaded {
		parts = append(parts, "loaded, not trained")
	}
	if r.Full.StoppedBy != "" {
		parts = append(parts, fmt.Sprintf("%d epochs, stopped by %s", r.Full.Epochs, r.Full.StoppedBy))
	}
	if r.Full.R2 != nil {
		parts = append(parts, "R2 "+num(*r.Full.R2))
	}
	if r.Full.Accuracy != nil && r.Measure != "accuracy" {
		parts = append(parts, "accuracy "+num(*r.Full.Accuracy))
	}
	if r.Full.AUC != nil && r.Measure != "auc" {
		parts = append(parts, "AUC "+num(*r.Full.AUC))
	}
	if len(parts) > 0 {
		fmt.Fprintf(w, "full model: %s\n", strings.Join(parts, "; "))
	}
	if l := choiceLine(r); l != "" {
		fmt.Fprintln(w, l)
	}
	if len(r.Full.Baselines) > 0 {
		bs := make([]string, len(r.Full.Baselines))
		for i, b := range r.Full.Baselines {
			// Gain is the full model's score minus the baseline's: the
			// baseline's loss minus the full model's for a loss.
			than := "better"
			if b.Gain < 0 {
				than = "worse"
			}
			bs[i] = fmt.Sprintf("%s %s (full model %s by %s, se %s)", b.Name, num(framework.Readable(r.Measure, b.Score)), than, num(math.Abs(b.Gain)), num(b.GainSE))
		}
		fmt.Fprintf(w, "baselines: %s %s\n", r.Measure, strings.Join(bs, ", "))
	}
}

// printWarnings writes the report's warnings to stderr.
func printWarnings(stderr io.Writer, rep *pipeline.Report) {
	for _, w := range rep.Warnings {
		fmt.Fprintln(stderr, "vi: warning: "+w)
	}
}

// choiceLine says how the full model's kind was chosen: the chosen kind's
// cross-validated loss, the others' with the standard error of their
// difference from the backend's model, and why; "" without a choice.
func choiceLine(r *pipeline.Report) string {
	c := r.Full.Choice
	if c == nil || len(c.Kinds) < 2 {
		return ""
	}
	name := func(k framework.KindScore) string {
		if k.Model == "" {
			return k.Name
		}
		return k.Name + " (" + kindModel(k, c) + ")"
	}
	var chosen string
	var others []string
	for _, k := range c.Kinds {
		if k.Name == c.Chosen {
			chosen = name(k) + " with cross-validated " + c.Measure + " " + num(k.Loss)
			continue
		}
		others = append(others, name(k)+" "+num(k.Loss))
	}
	var ses []string
	for _, k := range c.Kinds[1:] {
		ses = append(ses, num(k.DiffSE))
	}
	return fmt.Sprintf("model choice: %s vs %s, se of the difference %s: %s", chosen, strings.Join(others, ", "), strings.Join(ses, ", "), c.Reason)
}

// kindModel is a kind's model as the header names it: the mlp's chosen
// architecture as its hidden widths.
func kindModel(k framework.KindScore, c *framework.ModelChoice) string {
	if k.Name == autoHiddenBackend && k.Name == c.Kinds[0].Name && !strings.Contains(k.Model, " ") {
		return "hidden " + k.Model
	}
	return k.Model
}
