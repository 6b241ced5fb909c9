//go:build ignore

// The power study of research/2026-12-06-power-study.md: correlated designs
// with a known support, vi estimate on each, and per setting the AUC of the
// VI ranking against the support, the null rejection rate and the power.
//
//	go run research/scripts/power_study.go gen SETTING SEED OUT.csv
//	go run research/scripts/power_study.go run -vi VI -out DIR -settings LIST -seeds A-B [-tag T] [-- vi flags...]
//	go run research/scripts/power_study.go summary DIR [DIR...]
//
// A setting is RESPONSE-nN-rhoR, RESPONSE one of binary, linear, interact,
// thresh (all: every response, n 1000 and 3000, rho 0.5 and 0.8; dev: the
// four responses at n 1000, rho 0.8). The design: p = 50 standard normal
// features in 10 blocks of 5, equicorrelated at rho within a block and
// independent across blocks; 20 relevant features at random positions with
// coefficients s U(0.5, 1.5), s a random sign; the linear predictor
// eta = X beta standardised on the sample (mean 0, variance 1). The
// responses:
//
//	linear    y = eta + N(0, 1/4)                        (signal to noise 4)
//	interact  y = (eta + eta_int)/sqrt(2) + N(0, 1/4), eta_int: ten products
//	          x_a x_b of disjoint pairs of relevant features, coefficients
//	          s U(0.5, 1.5), standardised like eta
//	thresh    y = max(0, eta + N(0, 1/4))
//	binary    y ~ Bernoulli(1/(1 + exp(-4 eta)))        (Bayes accuracy about 0.9)
//
// The 30 other features are nulls: y is independent of each given the rest
// (their conditional VI is 0), while correlated with the relevant ones of
// their block. Each data set is drawn from PCG(seed, FNV-1a of the setting),
// so a seed gives the same data whatever else runs.
//
// run writes, for each setting and seed, DIR/SETTING/SEED.json (vi's report,
// written only when vi succeeds; an existing one is kept, so a run resumes)
// and DIR/SETTING/SEED.truth (the relevant features, comma-separated), and
// appends vi's wall and CPU seconds to DIR/times.tsv. vi runs with --seed
// SEED, --format json and the flags after --.
//
// summary prints, per setting and estimator, the number of data sets, the
// mean AUC of vi against the support, the null rejection rate and the power
// (p_value < 0.05 among the nulls and among the relevant features, pooled
// over the data sets), then the same pooled over the settings and per
// response.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const (
	features  = 50
	blockSize = 5
	relevant  = 20
	pairs     = 10
	noiseSD   = 0.5
	logitSD   = 4.0
)

var responses = []string{"binary", "linear", "interact", "thresh"}

type setting struct {
	response string
	n        int
	rho      float64
}

func (s setting) String() string {
	return fmt.Sprintf("%s-n%d-rho%g", s.response, s.n, s.rho)
}

func parseSetting(name string) (setting, error) {
	parts := strings.Split(name, "-")
	if len(parts) != 3 || !strings.HasPrefix(parts[1], "n") || !strings.HasPrefix(parts[2], "rho") {
		return setting{}, fmt.Errorf("setting %q: want RESPONSE-nN-rhoR", name)
	}
	n, err := strconv.Atoi(parts[1][1:])
	if err != nil {
		return setting{}, fmt.Errorf("setting %q: %w", name, err)
	}
	rho, err := strconv.ParseFloat(parts[2][3:], 64)
	if err != nil {
		return setting{}, fmt.Errorf("setting %q: %w", name, err)
	}
	for _, r := range responses {
		if r == parts[0] {
			return setting{parts[0], n, rho}, nil
		}
	}
	return setting{}, fmt.Errorf("setting %q: unknown response %q", name, parts[0])
}

func parseSettings(list string) ([]setting, error) {
	var out []setting
	for _, name := range strings.Split(list, ",") {
		switch name {
		case "all":
			for _, n := range []int{1000, 3000} {
				for _, rho := range []float64{0.5, 0.8} {
					for _, r := range responses {
						out = append(out, setting{r, n, rho})
					}
				}
			}
		case "dev":
			for _, r := range responses {
				out = append(out, setting{r, 1000, 0.8})
			}
		default:
			s, err := parseSetting(name)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
	}
	return out, nil
}

// dataset is one draw: the rows, the response and the relevant features.
type dataset struct {
	x       [][]float64
	y       []float64
	support []int
}

func standardise(v []float64) {
	var m, ss float64
	for _, a := range v {
		m += a
	}
	m /= float64(len(v))
	for _, a := range v {
		ss += (a - m) * (a - m)
	}
	sd := math.Sqrt(ss / float64(len(v)-1))
	for i := range v {
		v[i] = (v[i] - m) / sd
	}
}

func coef(r *rand.Rand) float64 {
	c := 0.5 + r.Float64()
	if r.IntN(2) == 0 {
		return -c
	}
	return c
}

func generate(s setting, seed uint64) dataset {
	h := fnv.New64a()
	h.Write([]byte(s.String()))
	r := rand.New(rand.NewPCG(seed, h.Sum64()))
	perm := r.Perm(features)
	support := append([]int(nil), perm[:relevant]...)
	beta := make([]float64, features)
	for _, j := range support {
		beta[j] = coef(r)
	}
	// Disjoint pairs of relevant features for the interactions.
	order := r.Perm(relevant)
	type pair struct {
		a, b int
		g    float64
	}
	prs := make([]pair, pairs)
	for k := range prs {
		prs[k] = pair{support[order[2*k]], support[order[2*k+1]], coef(r)}
	}
	d := dataset{x: make([][]float64, s.n), y: make([]float64, s.n), support: support}
	eta := make([]float64, s.n)
	etaInt := make([]float64, s.n)
	a, b := math.Sqrt(s.rho), math.Sqrt(1-s.rho)
	for i := range d.x {
		row := make([]float64, features)
		var z float64
		for j := range row {
			if j%blockSize == 0 {
				z = r.NormFloat64()
			}
			row[j] = a*z + b*r.NormFloat64()
			eta[i] += beta[j] * row[j]
		}
		for _, p := range prs {
			etaInt[i] += p.g * row[p.a] * row[p.b]
		}
		d.x[i] = row
	}
	standardise(eta)
	standardise(etaInt)
	for i := range d.y {
		switch s.response {
		case "linear":
			d.y[i] = eta[i] + noiseSD*r.NormFloat64()
		case "interact":
			d.y[i] = (eta[i]+etaInt[i])/math.Sqrt2 + noiseSD*r.NormFloat64()
		case "thresh":
			d.y[i] = math.Max(0, eta[i]+noiseSD*r.NormFloat64())
		case "binary":
			if r.Float64() < 1/(1+math.Exp(-logitSD*eta[i])) {
				d.y[i] = 1
			}
		}
	}
	sort.Ints(d.support)
	return d
}

func name(j int) string { return "x" + strconv.Itoa(j+1) }

func writeCSV(path string, d dataset) error {
	var sb strings.Builder
	for j := 0; j < features; j++ {
		sb.WriteString(name(j))
		sb.WriteByte(',')
	}
	sb.WriteString("y\n")
	for i, row := range d.x {
		for _, v := range row {
			sb.WriteString(strconv.FormatFloat(v, 'g', 6, 64))
			sb.WriteByte(',')
		}
		sb.WriteString(strconv.FormatFloat(d.y[i], 'g', 6, 64))
		sb.WriteByte('\n')
	}
	return os.WriteFile(path, []byte(sb.String()), 0o644)
}

func supportNames(d dataset) string {
	names := make([]string, len(d.support))
	for k, j := range d.support {
		names[k] = name(j)
	}
	return strings.Join(names, ",")
}

func parseSeeds(spec string) ([]uint64, error) {
	var out []uint64
	for _, part := range strings.Split(spec, ",") {
		lo, hi, found := strings.Cut(part, "-")
		a, err := strconv.ParseUint(lo, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("seeds %q: %w", spec, err)
		}
		b := a
		if found {
			if b, err = strconv.ParseUint(hi, 10, 64); err != nil {
				return nil, fmt.Errorf("seeds %q: %w", spec, err)
			}
		}
		for s := a; s <= b; s++ {
			out = append(out, s)
		}
	}
	return out, nil
}

func runOne(vi, dir string, s setting, seed uint64, extra []string) error {
	sdir := filepath.Join(dir, s.String())
	if err := os.MkdirAll(sdir, 0o755); err != nil {
		return err
	}
	base := filepath.Join(sdir, strconv.FormatUint(seed, 10))
	if _, err := os.Stat(base + ".json"); err == nil {
		return nil
	}
	d := generate(s, seed)
	csv := base + ".csv"
	if err := writeCSV(csv, d); err != nil {
		return err
	}
	defer os.Remove(csv)
	if err := os.WriteFile(base+".truth", []byte(supportNames(d)+"\n"), 0o644); err != nil {
		return err
	}
	args := append([]string{"estimate", "--data", csv, "--target", "y", "--format", "json",
		"--seed", strconv.FormatUint(seed, 10), "--progress", "off", "--out", base + ".json.tmp"}, extra...)
	cmd := exec.Command(vi, args...)
	cmd.Stderr = os.Stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s seed %d: %w", s, seed, err)
	}
	wall := time.Since(start).Seconds()
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
	if err := os.Rename(base+".json.tmp", base+".json"); err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(dir, "times.tsv"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = fmt.Fprintf(f, "%s\t%d\t%.1f\t%.1f\n", s, seed, wall, cpu)
	return err
}

type result struct {
	Feature   string  `json:"feature"`
	Estimator string  `json:"estimator"`
	VI        float64 `json:"vi"`
	SE        float64 `json:"se"`
	PValue    float64 `json:"p_value"`
}

type report struct {
	Results []result `json:"results"`
}

// auc is the probability that a relevant feature's vi exceeds a null's (ties count half).
func auc(vis map[string]float64, truth map[string]bool) float64 {
	var pos, neg []float64
	for f, v := range vis {
		if truth[f] {
			pos = append(pos, v)
		} else {
			neg = append(neg, v)
		}
	}
	var s float64
	for _, a := range pos {
		for _, b := range neg {
			switch {
			case a > b:
				s++
			case a == b:
				s += 0.5
			}
		}
	}
	return s / float64(len(pos)*len(neg))
}

type tally struct {
	sets                  int
	aucSum                float64
	nullRej, nulls        int
	relRej, rels          int
	dsPowerMin, dsNullMax float64
}

func (t *tally) add(u tally) {
	t.sets += u.sets
	t.aucSum += u.aucSum
	t.nullRej += u.nullRej
	t.nulls += u.nulls
	t.relRej += u.relRej
	t.rels += u.rels
}

func (t tally) row(label string) string {
	return fmt.Sprintf("| %s | %d | %.3f | %.3f | %.3f |", label, t.sets,
		t.aucSum/float64(t.sets), float64(t.nullRej)/float64(t.nulls), float64(t.relRej)/float64(t.rels))
}

func summarise(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	tallies := map[string]map[string]*tally{} // estimator -> setting -> tally
	var settings []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if _, err := parseSetting(e.Name()); err != nil {
			continue
		}
		settings = append(settings, e.Name())
		files, _ := filepath.Glob(filepath.Join(dir, e.Name(), "*.json"))
		for _, file := range files {
			raw, err := os.ReadFile(file)
			if err != nil {
				return err
			}
			var rep report
			if err := json.Unmarshal(raw, &rep); err != nil {
				return fmt.Errorf("%s: %w", file, err)
			}
			tr, err := os.ReadFile(strings.TrimSuffix(file, ".json") + ".truth")
			if err != nil {
				return err
			}
			truth := map[string]bool{}
			for _, f := range strings.Split(strings.TrimSpace(string(tr)), ",") {
				truth[f] = true
			}
			per := map[string]map[string]float64{}
			t := map[string]*tally{}
			for _, r := range rep.Results {
				if per[r.Estimator] == nil {
					per[r.Estimator] = map[string]float64{}
					t[r.Estimator] = &tally{sets: 1}
				}
				per[r.Estimator][r.Feature] = r.VI
				rej := 0
				if r.PValue < 0.05 {
					rej = 1
				}
				if truth[r.Feature] {
					t[r.Estimator].rels++
					t[r.Estimator].relRej += rej
				} else {
					t[r.Estimator].nulls++
					t[r.Estimator].nullRej += rej
				}
			}
			for est, vis := range per {
				t[est].aucSum = auc(vis, truth)
				if tallies[est] == nil {
					tallies[est] = map[string]*tally{}
				}
				if tallies[est][e.Name()] == nil {
					tallies[est][e.Name()] = &tally{}
				}
				tallies[est][e.Name()].add(*t[est])
			}
		}
	}
	ests := make([]string, 0, len(tallies))
	for est := range tallies {
		ests = append(ests, est)
	}
	sort.Strings(ests)
	fmt.Printf("## %s\n", dir)
	for _, est := range ests {
		fmt.Printf("\n%s\n\n| setting | data sets | AUC | null rejection | power |\n|---|---|---|---|---|\n", est)
		var pooled tally
		byResp := map[string]*tally{}
		for _, s := range settings {
			t := tallies[est][s]
			if t == nil || t.sets == 0 {
				continue
			}
			fmt.Println(t.row(s))
			pooled.add(*t)
			resp := strings.SplitN(s, "-", 2)[0]
			if byResp[resp] == nil {
				byResp[resp] = &tally{}
			}
			byResp[resp].add(*t)
		}
		for _, r := range responses {
			if t := byResp[r]; t != nil && len(byResp) > 1 && t.sets < pooled.sets {
				fmt.Println(t.row(r + " (all n, rho)"))
			}
		}
		if pooled.sets > 0 {
			fmt.Println(pooled.row("**pooled**"))
		}
	}
	return nil
}

// inprocFunc is set by power_study_inproc.go when it is built in.
var inprocFunc func([]string) error

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: power_study.go gen|run|summary ...")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "gen":
		if len(os.Args) != 5 {
			err = fmt.Errorf("usage: gen SETTING SEED OUT.csv")
			break
		}
		var s setting
		var seed uint64
		if s, err = parseSetting(os.Args[2]); err != nil {
			break
		}
		if seed, err = strconv.ParseUint(os.Args[3], 10, 64); err != nil {
			break
		}
		d := generate(s, seed)
		if err = writeCSV(os.Args[4], d); err == nil {
			fmt.Println(supportNames(d))
		}
	case "run":
		fs := flag.NewFlagSet("run", flag.ExitOnError)
		vi := fs.String("vi", "vi", "vi executable")
		out := fs.String("out", "", "output directory")
		list := fs.String("settings", "dev", "settings (comma-separated; all, dev)")
		seedSpec := fs.String("seeds", "", "seeds, e.g. 1001-1005")
		fs.Parse(os.Args[2:])
		var ss []setting
		var seeds []uint64
		if ss, err = parseSettings(*list); err != nil {
			break
		}
		if seeds, err = parseSeeds(*seedSpec); err != nil {
			break
		}
		// Seeds outermost: a partial run has every setting at its first seeds.
		for _, seed := range seeds {
			for _, s := range ss {
				if e := runOne(*vi, *out, s, seed, fs.Args()); e != nil {
					fmt.Fprintln(os.Stderr, "power_study:", e)
				}
			}
		}
	case "inproc":
		if inprocFunc == nil {
			err = fmt.Errorf("inproc needs research/scripts/power_study_inproc.go on the go run line")
			break
		}
		err = inprocFunc(os.Args[2:])
	case "summary":
		for _, dir := range os.Args[2:] {
			if err = summarise(dir); err != nil {
				break
			}
		}
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "power_study:", err)
		os.Exit(1)
	}
}
