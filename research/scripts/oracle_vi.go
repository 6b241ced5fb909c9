//go:build ignore

// Oracle VIs for research/scripts/defaults-study.sh: the VI that a perfect full model
// and perfect reduced models would show on the same evaluation rows as vi.
//
//	go run research/scripts/oracle_vi.go SETTING DATA.csv SEED REPORT.json...
//
// vi's VI estimate on 667 evaluation rows scatters around the truth by the
// rows' own noise (for the interaction's x1, sd((2 x1 x2)²)/sqrt(667) =
// 0.44) whatever the model; the oracle VI on the same rows has that
// scatter too, so the error against it is what the model adds. For each
// report (vi estimate --format json --inference plain, the same data and
// --seed) it prints each estimator's mean absolute error against the
// truth and against the oracle.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"

	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/pipeline"
	"github.com/lazyvi/lazyvi/simulate"
)

// f and its conditional mean without feature j (-1: f itself).
func model(setting string, x []float64, j int) float64 {
	switch setting {
	case "interaction":
		t := []float64{2 * x[0] * x[1], 1.5 * x[2] * x[3], x[4]}
		switch j {
		case 0, 1:
			t[0] = 0
		case 2, 3:
			t[1] = 0
		case 4:
			t[2] = 0
		}
		return t[0] + t[1] + t[2]
	case "friedman1":
		m := func(b float64) float64 { // E_a sin(pi a b)
			if b == 0 {
				return 0
			}
			return (1 - math.Cos(math.Pi*b)) / (math.Pi * b)
		}
		t := []float64{10 * math.Sin(math.Pi*x[0]*x[1]), 20 * (x[2] - 0.5) * (x[2] - 0.5), 10 * x[3], 5 * x[4]}
		switch j {
		case 0:
			t[0] = 10 * m(x[1])
		case 1:
			t[0] = 10 * m(x[0])
		case 2:
			t[1] = 20.0 / 12
		case 3:
			t[2] = 5
		case 4:
			t[3] = 2.5
		}
		return t[0] + t[1] + t[2] + t[3]
	}
	panic("unknown setting " + setting)
}

func main() {
	setting, path := os.Args[1], os.Args[2]
	seed, _ := strconv.ParseInt(os.Args[3], 10, 64)
	d, err := dataio.LoadCSV(context.Background(), path)
	if err != nil {
		panic(err)
	}
	n, c := d.X.Dims()
	p := c - 1
	// The evaluation rows of pipeline.Prepare's split.
	perm := rand.New(rand.NewPCG(uint64(seed), 0x5eed5b11)).Perm(n)
	n1 := int(math.Round(pipeline.DefaultTrainFrac * float64(n)))
	eval := perm[n1:]
	oracle := make(map[string]float64)
	for j := 0; j < p; j++ {
		var s float64
		for _, i := range eval {
			x := d.X.RawRowView(i)
			y := x[p]
			full, red := y-model(setting, x, -1), y-model(setting, x, j)
			s += red*red - full*full
		}
		oracle[d.Names[j]] = s / float64(len(eval))
	}
	var truth []float64
	if setting == "friedman1" {
		truth = simulate.Friedman1Truth()
	} else {
		truth = []float64{4, 4, 2.25, 2.25, 1, 0, 0, 0}
	}
	for _, rp := range os.Args[4:] {
		b, err := os.ReadFile(rp)
		if err != nil {
			panic(err)
		}
		var rep pipeline.Report
		if err := json.Unmarshal(b, &rep); err != nil {
			panic(err)
		}
		vsT, vsO, k := map[string]float64{}, map[string]float64{}, map[string]float64{}
		var order []string
		for _, r := range rep.Results {
			j := 0
			for d.Names[j] != r.Feature {
				j++
			}
			if k[r.Estimator] == 0 {
				order = append(order, r.Estimator)
			}
			vsT[r.Estimator] += math.Abs(r.VI - truth[j])
			vsO[r.Estimator] += math.Abs(r.VI - oracle[r.Feature])
			k[r.Estimator]++
		}
		fmt.Printf("%s seed %d %-28s", setting, seed, rp)
		for _, e := range order {
			fmt.Printf("  %s mae_truth %.4f mae_oracle %.4f", e, vsT[e]/k[e], vsO[e]/k[e])
		}
		fmt.Println()
	}
}
