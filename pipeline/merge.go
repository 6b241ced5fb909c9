package pipeline

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
)

// ShardInfo says which slice of a run a report holds (Report.Shard); a
// report of a whole run has none.
type ShardInfo struct {
	Shard
	// Features are the names of all the run's features (or groups), in the
	// order of a whole run; the report's results hold the shard's slice of
	// them (Shard.Bounds).
	Features []string `json:"features"`
	// Run fingerprints what every result depends on: the data, the model
	// and every setting that shapes a result. Shards of one run share it.
	Run string `json:"run"`
}

// shardInfoJSON is ShardInfo's JSON: the shard's index 1-based, as
// --shard K/N and the messages give it, not Shard.Index's 0-based.
type shardInfoJSON struct {
	Index    int      `json:"index"`
	Count    int      `json:"count"`
	Features []string `json:"features"`
	Run      string   `json:"run"`
}

// MarshalJSON writes the shard's index 1-based: "index": 1 for --shard 1/2.
func (s ShardInfo) MarshalJSON() ([]byte, error) {
	return json.Marshal(shardInfoJSON{s.Index + 1, s.Count, s.Features, s.Run})
}

// UnmarshalJSON reads what MarshalJSON writes; MergeReports checks the
// index's range (checkShardReport).
func (s *ShardInfo) UnmarshalJSON(b []byte) error {
	var j shardInfoJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*s = ShardInfo{Shard: Shard{Index: j.Index - 1, Count: j.Count}, Features: j.Features, Run: j.Run}
	return nil
}

// Slice returns the report's share of its features: the shard's slice of
// feats, and the ShardInfo the report carries (nil for the whole run).
func (s Shard) Slice(feats []framework.Feature, run string) ([]framework.Feature, *ShardInfo) {
	if s.Whole() {
		return feats, nil
	}
	names := make([]string, len(feats))
	for i, f := range feats {
		names[i] = f.Name
	}
	lo, hi := s.Bounds(len(feats))
	return feats[lo:hi], &ShardInfo{Shard: s, Features: names, Run: run}
}

// ErrWholeRun marks the input error of MergeReports for a report that holds
// a whole run (written without EstimateOptions.Shard), not a shard.
var ErrWholeRun = errors.New("the report of a whole run")

// A NamedReport is a report with the name of the file it came from, for
// MergeReports's messages.
type NamedReport struct {
	Name   string
	Report *Report
}

// MergeReports combines the reports of all the shards of one run into the
// report the run would have given whole: the results in the whole run's
// order (by estimator, then feature) and the p-values adjusted over all
// the features (the shards' adjustments covered their own slices only).
// It refuses, with an input error naming the files, reports of different
// runs or models, a report of a whole run, two reports of the same shard,
// and missing shards (naming their features).
func MergeReports(reports []NamedReport) (*Report, error) {
	if len(reports) == 0 {
		return nil, framework.Usagef("merge: no reports")
	}
	first := reports[0]
	count := 0
	byIndex := map[int]NamedReport{}
	for _, nr := range reports {
		if err := checkShardReport(nr); err != nil {
			return nil, err
		}
		s := nr.Report.Shard
		if count == 0 {
			count = s.Count
		}
		f0 := first.Report.Shard
		switch {
		case s.Run != f0.Run:
			return nil, &dataio.InputError{File: nr.Name, Msg: fmt.Sprintf("is a shard of another run than %s (other data, model or settings)", first.Name)}
		case s.Count != f0.Count:
			return nil, &dataio.InputError{File: nr.Name, Msg: fmt.Sprintf("is shard %s, of %d shards; %s is of %d", s.Shard, s.Count, first.Name, f0.Count)}
		case !slices.Equal(s.Features, f0.Features):
			return nil, &dataio.InputError{File: nr.Name, Msg: fmt.Sprintf("lists other features than %s", first.Name)}
		case !sameRun(nr.Report, first.Report):
			return nil, &dataio.InputError{File: nr.Name, Msg: fmt.Sprintf("was run with other settings than %s (measure, backend, split, inference or level)", first.Name)}
		}
		if prev, ok := byIndex[s.Index]; ok {
			return nil, &dataio.InputError{File: nr.Name, Msg: fmt.Sprintf("overlaps %s: both hold shard %s", prev.Name, s.Shard)}
		}
		if err := checkShardResults(nr); err != nil {
			return nil, err
		}
		byIndex[s.Index] = nr
	}
	var missing []string
	var shardsMissing []string
	// At most maxListed missing shards are named: the loop ends after
	// len(reports) + maxListed steps, whatever the count.
	const maxListed = 10
	for k := 0; k < count; k++ {
		if len(shardsMissing) == maxListed {
			shardsMissing = append(shardsMissing, fmt.Sprintf("and %d more", count-len(byIndex)-maxListed))
			break
		}
		if _, ok := byIndex[k]; !ok {
			s := Shard{Index: k, Count: count}
			lo, hi := s.Bounds(len(first.Report.Shard.Features))
			shardsMissing = append(shardsMissing, s.String())
			missing = append(missing, first.Report.Shard.Features[lo:hi]...)
		}
	}
	if len(shardsMissing) > 0 {
		return nil, framework.Usagef("merge: missing shard %s: features %s", strings.Join(shardsMissing, ", "), strings.Join(missing, ", "))
	}

	out := *first.Report
	out.Shard = nil
	out.Results = nil
	ests := estimatorOrder(first.Report.Results)
	for _, est := range ests {
		var fam []int
		for k := 0; k < count; k++ {
			for _, r := range byIndex[k].Report.Results {
				if r.Estimator == est {
					out.Results = append(out.Results, r)
					fam = append(fam, len(out.Results)-1)
				}
			}
		}
		if out.Adjust == inference.AdjustNone.String() || out.Adjust == "" {
			continue
		}
		a, err := inference.ParseAdjust(out.Adjust)
		if err != nil {
			return nil, &dataio.InputError{File: first.Name, Msg: fmt.Sprintf("adjust %q: %v", out.Adjust, err)}
		}
		ps := make([]float64, len(fam))
		for i, j := range fam {
			ps[i] = out.Results[j].PValue
		}
		for i, adj := range inference.AdjustPValues(ps, a) {
			v := adj
			out.Results[fam[i]].PAdjusted = &v
		}
	}
	return &out, nil
}

// checkShardResults checks that a shard's results are its slice of the
// run's features, for every estimator, in order.
func checkShardResults(nr NamedReport) error {
	s := nr.Report.Shard
	lo, hi := s.Bounds(len(s.Features))
	want := s.Features[lo:hi]
	for _, est := range estimatorOrder(nr.Report.Results) {
		var got []string
		for _, r := range nr.Report.Results {
			if r.Estimator == est {
				got = append(got, r.Feature)
			}
		}
		if !slices.Equal(got, want) {
			return &dataio.InputError{File: nr.Name, Msg: fmt.Sprintf("shard %s should hold features %s for %s, holds %s", s.Shard, strings.Join(want, ", "), est, strings.Join(got, ", "))}
		}
	}
	return nil
}

// estimatorOrder returns the estimators of rs in their first appearance's
// order.
func estimatorOrder(rs []inference.Result) []string {
	var names []string
	for _, r := range rs {
		if !slices.Contains(names, r.Estimator) {
			names = append(names, r.Estimator)
		}
	}
	return names
}

// sameRun reports whether two shard reports agree on everything but their
// results, shard and timings (compared in their JSON form, so that every
// field a report gains is compared too).
func sameRun(a, b *Report) bool {
	strip := func(r *Report) []byte {
		c := *r
		c.Full.Seconds = 0
		c.Results, c.Shard = nil, nil
		out, err := json.Marshal(c)
		if err != nil {
			return nil
		}
		return out
	}
	ja, jb := strip(a), strip(b)
	return ja != nil && bytes.Equal(ja, jb) && slices.Equal(estimatorOrder(a.Results), estimatorOrder(b.Results))
}
