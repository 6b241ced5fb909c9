package framework

// FitReport says how a model's training ended, for the report and for
// choosing among candidate models (pipeline.Config.Candidates).
type FitReport struct {
	// Epochs is the number of passes over the training rows.
	Epochs int
	// StoppedBy is what ended training: "patience" (the early-stopping
	// rule: the monitored loss stopped improving) or "cap" (the epoch
	// limit); "" when the model does not say.
	StoppedBy string
	// ValidRows is the size of the validation slice of the train split
	// that early stopping watched; 0 when it watched the training loss.
	ValidRows int
	// ValidLoss is the model's training loss (the backend's own: squared
	// error on its scale, log-loss) on the validation slice at the kept
	// parameters; on the training rows when ValidRows is 0.
	ValidLoss float64
	// Loaded: the model's fitted state was loaded (a pretrained model), not
	// trained; the fields above are then zero.
	Loaded bool
	// Architecture describes the network the backend built, in a few
	// words, for the report; "" when the backend does not say.
	Architecture string
}

// FitReporter is an optional interface of Models that train iteratively:
// FitReport, valid after Fit, says how training ended. The plugin
// transport carries it (from plugins that report it; others give the zero
// FitReport).
type FitReporter interface {
	FitReport() FitReport
}

// FitReportOf returns m's FitReport, or the zero FitReport when m has none.
// FitReporter is not a capability (see capability.go): a model that has
// the method reports what it knows, the zero FitReport when nothing.
func FitReportOf(m Model) FitReport {
	if r, ok := m.(FitReporter); ok {
		return r.FitReport()
	}
	return FitReport{}
}
