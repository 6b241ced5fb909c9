package main

import (
	"fmt"
	"io"
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

// printWarnings writes the report's warnings to stderr.
func printWarnings(stderr io.Writer, rep *pipeline.Report) {
	for _, w := range rep.Warnings {
		fmt.Fprintln(stderr, "vi: warning: "+w)
	}
}
