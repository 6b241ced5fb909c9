package dataio

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/lazyvi/lazyvi/framework"
)

// The methods here make a run's settings agree with the model file it
// uses: a setting not given takes the file's value, and one given with
// another value is refused. They name the settings by vi's flags; set
// holds the names of the flags given (without "--").

// Conflict is the usage error of a flag given with another value than the
// model file m's.
func (m *SavedModel) Conflict(flag, given, saved string) error {
	return framework.Usagef("--%s %s differs from the model's %s (%s); leave --%s out to use the model's", flag, given, saved, m.Source, flag)
}

// UsePrepare makes p prepare the data file as the model's was (Prepare):
// --features, --drop, --categorical and --missing default to the model's,
// and given with other values are refused.
func (m *SavedModel) UsePrepare(p *PrepareOptions, set map[string]bool) error {
	var saved PrepareOptions
	if m.Prepare != nil {
		saved = *m.Prepare
	}
	savedMissing, _ := ParseMissing(string(saved.Missing))
	for _, f := range []struct {
		flag        string
		given, from *[]string
	}{
		{"features", &p.Features, &saved.Features},
		{"drop", &p.Drop, &saved.Drop},
		{"categorical", &p.Categorical, &saved.Categorical},
	} {
		switch {
		case !set[f.flag]:
			*f.given = *f.from
		case !slices.Equal(*f.given, *f.from):
			return m.Conflict(f.flag, strings.Join(*f.given, ","), strings.Join(*f.from, ","))
		}
	}
	switch {
	case !set["missing"]:
		p.Missing = savedMissing
	case p.Missing != savedMissing:
		return m.Conflict("missing", string(p.Missing), string(savedMissing))
	}
	return nil
}

// UseCounts sets *crossfit and *repeats (--crossfit, --repeats) to the
// model's folds and repetitions, refusing them, and --train-frac
// (trainFrac) for a model of one split, given with other values. It
// returns set with crossfit and repeats added: the model's counts decide
// the inference's defaults as the same flags given would.
func (m *SavedModel) UseCounts(crossfit, repeats *int, trainFrac float64, set map[string]bool) (map[string]bool, error) {
	if set["crossfit"] && *crossfit != m.CrossFit {
		return nil, m.Conflict("crossfit", strconv.Itoa(*crossfit), strconv.Itoa(m.CrossFit))
	}
	if set["repeats"] && *repeats != m.Repetitions() {
		return nil, m.Conflict("repeats", strconv.Itoa(*repeats), strconv.Itoa(m.Repetitions()))
	}
	if m.CrossFit == 0 && set["train-frac"] && trainFrac != m.TrainFrac {
		return nil, m.Conflict("train-frac", strconv.FormatFloat(trainFrac, 'g', -1, 64), strconv.FormatFloat(m.TrainFrac, 'g', -1, 64))
	}
	*crossfit, *repeats = m.CrossFit, m.Repetitions()
	counts := maps.Clone(set)
	counts["crossfit"], counts["repeats"] = true, true
	return counts, nil
}
