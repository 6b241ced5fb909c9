package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"

	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/inference"
)

// shardResultKeys are the fields every result of a shard report must
// carry: a missing one would read as 0 (a p-value of 0 is "highly
// significant").
var shardResultKeys = []string{"feature", "estimator", "vi", "se", "ci_low", "ci_high", "p_value"}

// ReadShardReport reads a JSON report of vi estimate --shard (what vi
// merge merges), refusing one that lacks a result's field or holds a
// value no report can (checkShardReport); name is the file's name for
// errors, which are input errors.
func ReadShardReport(r io.Reader, name string) (*Report, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	notReport := func(err error) error {
		return &dataio.InputError{File: name, Msg: "not a JSON report of vi estimate (--format json): " + dataio.Quote(err.Error())}
	}
	var rep Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, notReport(err)
	}
	var raw struct {
		Results []map[string]json.RawMessage `json:"results"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, notReport(err)
	}
	for i, res := range raw.Results {
		for _, k := range shardResultKeys {
			if v, ok := res[k]; !ok || string(v) == "null" {
				return nil, &dataio.InputError{File: name, Msg: fmt.Sprintf("result %d (%s) has no %s", i+1, resultName(rep.Results[i]), k)}
			}
		}
	}
	if err := checkShardReport(NamedReport{Name: name, Report: &rep}); err != nil {
		return nil, err
	}
	return &rep, nil
}

// LoadShardReport reads the shard report at path (ReadShardReport),
// returning as soon as ctx is done even while the file blocks (a FIFO
// without a writer).
func LoadShardReport(ctx context.Context, path string) (*Report, error) {
	return dataio.LoadFile(ctx, path, ReadShardReport)
}

// checkShardReport checks what MergeReports relies on in a shard's
// report: its shard's index within its count, and results whose numbers
// a report can hold (finite, a standard error >= 0, a p-value in [0, 1]).
func checkShardReport(nr NamedReport) error {
	bad := func(format string, args ...any) error {
		return &dataio.InputError{File: nr.Name, Msg: fmt.Sprintf(format, args...)}
	}
	s := nr.Report.Shard
	if s == nil {
		return &dataio.InputError{File: nr.Name, Msg: "is the report of a whole run, not of a shard", Err: ErrWholeRun}
	}
	if s.Count < 2 {
		return bad("shard.count %d: a shard report is one of 2 or more", s.Count)
	}
	if s.Index < 0 || s.Index >= s.Count {
		return bad("shard.index %d is out of range for shard.count %d (want 1 to %d)", s.Index+1, s.Count, s.Count)
	}
	// vi estimate --shard makes at most one shard per feature.
	if s.Count > len(s.Features) {
		return bad("shard.count %d is more than the run's %d features: a run has at most one shard per feature", s.Count, len(s.Features))
	}
	for i, r := range nr.Report.Results {
		what := ""
		switch {
		case !finite(r.VI):
			what = fmt.Sprintf("vi %g is not finite", r.VI)
		case !finite(r.SE) || r.SE < 0:
			what = fmt.Sprintf("se %g is not a finite number >= 0", r.SE)
		case !finite(r.CILow) || !finite(r.CIHigh):
			what = fmt.Sprintf("the interval [%g, %g] is not finite", r.CILow, r.CIHigh)
		case !(r.PValue >= 0 && r.PValue <= 1):
			what = fmt.Sprintf("p_value %g is outside [0, 1]", r.PValue)
		}
		if what != "" {
			return bad("result %d (%s): %s", i+1, resultName(r), what)
		}
	}
	return nil
}

// resultName names a result in messages: its estimator and feature, cut
// as cells are.
func resultName(r inference.Result) string {
	return dataio.Quote(r.Estimator) + ", " + dataio.Quote(r.Feature)
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
