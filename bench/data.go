package bench

import (
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"text/tabwriter"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/lazyvi/lazyvi/dataio"
)

// DataReport is a timing run on a user's data (vi bench data --format json)
// with each estimator's Agreement with retrain.
type DataReport struct {
	Report
	Source    string      `json:"source"`
	Target    string      `json:"target"`
	Agreement []Agreement `json:"agreement"`
}

// Agreement compares an estimator's VIs with retrain's over the timed
// features: the mean absolute difference, Spearman's rank correlation and
// the overlap of the top TopK features (shared / TopK).
type Agreement struct {
	Estimator   string  `json:"estimator"`
	MeanAbsDiff float64 `json:"mean_abs_diff"`
	RankCorr    float64 `json:"rank_corr"`
	TopK        int     `json:"top_k"`
	TopOverlap  float64 `json:"top_overlap"`
}

// subsampleSeedPerturb is the second word of Subsample's PCG seed.
const subsampleSeedPerturb = 0x0da7a5e1

// Subsample returns n rows of d drawn without replacement by a seeded
// permutation, in their order in the file, with their labels of the
// partition part (nil: none); d and part themselves when n is 0 or not
// below its rows.
func Subsample(d *dataio.Dataset, part []int, n int, seed int64) (*dataio.Dataset, []int) {
	r, c := d.X.Dims()
	if n == 0 || n >= r {
		return d, part
	}
	pick := rand.New(rand.NewPCG(uint64(seed), subsampleSeedPerturb)).Perm(r)[:n]
	slices.Sort(pick)
	x := mat.NewDense(n, c, nil)
	var sub []int
	for i, row := range pick {
		x.SetRow(i, d.X.RawRowView(row))
		if part != nil {
			sub = append(sub, part[row])
		}
	}
	out := *d
	out.X = x
	return &out, sub
}

// Agree compares vi with the reference ref (same features, same order).
func Agree(name string, vi, ref []float64) Agreement {
	a := Agreement{Estimator: name, MeanAbsDiff: *meanAbsDiff(vi, ref)}
	a.RankCorr = stat.Correlation(ranks(vi), ranks(ref), nil)
	a.TopK = max(1, min(5, len(ref)/2))
	top := func(v []float64) []int {
		idx := make([]int, len(v))
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(i, j int) int {
			switch {
			case v[i] > v[j]:
				return -1
			case v[i] < v[j]:
				return 1
			}
			return 0
		})
		return idx[:a.TopK]
	}
	tv, tr := top(vi), top(ref)
	shared := 0
	for _, i := range tv {
		if slices.Contains(tr, i) {
			shared++
		}
	}
	a.TopOverlap = float64(shared) / float64(a.TopK)
	return a
}

// ranks returns the ranks of v (1 = smallest), ties sharing their mean rank.
func ranks(v []float64) []float64 {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(i, j int) int {
		switch {
		case v[i] < v[j]:
			return -1
		case v[i] > v[j]:
			return 1
		}
		return 0
	})
	r := make([]float64, len(v))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && v[idx[j+1]] == v[idx[i]] {
			j++
		}
		for k := i; k <= j; k++ {
			r[idx[k]] = float64(i+j)/2 + 1
		}
		i = j + 1
	}
	return r
}

// WriteDataTable writes a data run as a table: the timing, then each
// estimator's agreement with retrain.
func WriteDataTable(w io.Writer, rep DataReport) {
	WriteTable(w, []Report{rep.Report})
	fmt.Fprintf(w, "\nagreement with retrain (%s, response %s, %d features)\n\n", rep.Source, rep.Target, rep.Results[0].Features)
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "estimator\tmean |diff|\trank corr\ttop-k overlap\t")
	for _, a := range rep.Agreement {
		fmt.Fprintf(tw, "%s\t%.4g\t%.3f\t%s\t\n", a.Estimator, a.MeanAbsDiff, a.RankCorr, strings.TrimSpace(fmt.Sprintf("%.0f/%d", a.TopOverlap*float64(a.TopK), a.TopK)))
	}
	tw.Flush()
}
