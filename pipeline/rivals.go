package pipeline

import (
	"fmt"
	"strings"

	"github.com/lazyvi/lazyvi/framework"
)

// rivalsRunning returns the rivals of cfg whose backends run every one of
// ests, and a note for each left out: a rival chosen as the full model
// would fail the run at its first reduction with an estimator it cannot
// run (warm-es on the linear model, say), so the choice is made among the
// models that can serve every estimator asked for.
func rivalsRunning(rivals []Baseline, ests []framework.Estimator) ([]Baseline, []string) {
	var keep []Baseline
	var notes []string
	for _, b := range rivals {
		_, lacking := runnable(ests, b.Backend.Capabilities())
		if len(lacking) == 0 {
			keep = append(keep, b)
			continue
		}
		names, what := lackingNames(ests, lacking)
		notes = append(notes, fmt.Sprintf("the %s model was not considered as the full model: %s needs %s, which it lacks",
			b.Name, strings.Join(names, ", "), strings.Join(what, " and ")))
	}
	return keep, notes
}
