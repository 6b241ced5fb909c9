package simulate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/internal/sysmem"
	"gonum.org/v1/gonum/mat"
)

// Data is a simulated data set.
type Data struct {
	Setting string     // "linear", "binary", "highdim", "logistic", "friedman1" or "interaction"
	Names   []string   // x1..xp, y
	X       *mat.Dense // n x (p+1), the last column is y
	Truth   []float64  // true VI of x1..xp under Measure; nil if unknown
	Measure string     // the measure Truth is for: "mse" or "accuracy"
	Rho     float64    // Corr(x1, x2)
	Seed    int64
}

// NoiseVar is the variance of the additive noise of linear and highdim.
const NoiseVar = 0.1

// The high-dimensional setting's network. The paper (5.3) leaves its size,
// spread and noise unstated; these are the values of the authors' code
// (generate_WV(beta, 12, sigma=0.1)). The network is drawn once from a fixed
// stream, the same for every seed, so that repetitions with different seeds
// sample the same distribution (whose VI is then one unknown number).
const (
	HighDimP      = 100
	HighDimHidden = 12  // m, rows of W
	HighDimSigma  = 0.1 // W[:, j] ~ N(beta_j, sigma²)
)

// streamConst is the second PCG word; the seed is the first.
const streamConst = 0x6c617a7976690001

// networkSeed seeds the high-dimensional setting's network.
const networkSeed = 0x6c617a7976690002

var settings = []string{"binary", "friedman1", "highdim", "interaction", "linear", "logistic"}

// Settings returns the names Generate accepts, sorted.
func Settings() []string { return append([]string(nil), settings...) }

// DefaultRho is the Corr(x1, x2) a setting is simulated with when none is
// chosen: 0.5 for linear and highdim, LogisticRho for logistic, 0 for the
// settings of independent features (binary, friedman1, interaction).
func DefaultRho(setting string) float64 {
	switch setting {
	case "binary", "friedman1", "interaction":
		return 0
	case "logistic":
		return LogisticRho
	}
	return 0.5
}

// Generate returns the named setting's data set of n samples. rho is
// Corr(x1, x2) for linear, highdim and logistic (the paper uses 0.5 for
// highdim and LogisticRho for logistic, its Shapley experiment);
// binary has independent features and requires rho = 0. Bad arguments wrap
// framework.ErrUsage.
func Generate(setting string, n int, rho float64, seed int64) (*Data, error) {
	switch setting {
	case "linear":
		return Linear(n, rho, seed)
	case "binary":
		if rho != 0 {
			return nil, framework.Usagef("setting binary has independent features; rho must be 0, not %v", rho)
		}
		return Binary(n, seed)
	case "highdim":
		return highDim(n, rho, seed)
	case "logistic":
		return Logistic(n, rho, seed)
	case "friedman1":
		if err := independent(setting, rho); err != nil {
			return nil, err
		}
		return Friedman1(n, seed)
	case "interaction":
		if err := independent(setting, rho); err != nil {
			return nil, err
		}
		return Interaction(n, seed)
	}
	return nil, framework.Usagef("unknown setting %q (have %s)", setting, strings.Join(settings, ", "))
}

func newRand(seed int64) *rand.Rand { return rand.New(rand.NewPCG(uint64(seed), streamConst)) }

// check refuses a count of samples that is not positive or whose n x
// (p+1) matrix would not fit in the machine's memory (before it is
// allocated), and a rho that is no correlation.
func check(n, p int, rho float64) error {
	if n < 1 {
		return framework.Usagef("the number of samples must be positive, not %d", n)
	}
	if need, have := 8*float64(n)*float64(p+1), float64(sysmem.Total()); need > have {
		return framework.Usagef("%d samples of %d columns take %.3g GB, more than this machine's %.3g GB of memory", n, p+1, need/1e9, have/1e9)
	}
	if !(rho >= -1 && rho <= 1) {
		return framework.Usagef("rho must be a correlation in [-1, 1], not %v", rho)
	}
	return nil
}

func names(p int) []string {
	out := make([]string, p+1)
	for j := range p {
		out[j] = "x" + strconv.Itoa(j+1)
	}
	out[p] = "y"
	return out
}

// correlated fills row with independent standard normals except
// Corr(row[0], row[1]) = rho (the Cholesky factor of [[1 rho] [rho 1]]).
func correlated(rng *rand.Rand, row []float64, rho float64) {
	for j := range row {
		row[j] = rng.NormFloat64()
	}
	if len(row) > 1 {
		row[1] = rho*row[0] + math.Sqrt(1-rho*rho)*row[1]
	}
}

// Linear is the paper's 5.1: p = 6, Corr(x1, x2) = rho, y = 1.5 x1 + 1.2 x2
// + x3 + eps with eps ~ N(0, NoiseVar). Truth is the MSE VI
// (1.5²(1-rho²), 1.2²(1-rho²), 1, 0, 0, 0): dropping x1 leaves
// E[y | x_-1] = 1.5 rho x2 + 1.2 x2 + x3, whose extra error is
// 1.5² Var(x1 | x2) = 1.5²(1-rho²).
func Linear(n int, rho float64, seed int64) (*Data, error) {
	if err := check(n, 6, rho); err != nil {
		return nil, err
	}
	const p = 6
	beta := [p]float64{1.5, 1.2, 1, 0, 0, 0}
	rng := newRand(seed)
	x := mat.NewDense(n, p+1, nil)
	sd := math.Sqrt(NoiseVar)
	for i := range n {
		row := x.RawRowView(i)
		correlated(rng, row[:p], rho)
		y := sd * rng.NormFloat64()
		for j, b := range beta {
			y += b * row[j]
		}
		row[p] = y
	}
	c := 1 - rho*rho
	return &Data{
		Setting: "linear", Names: names(p), X: x, Measure: "mse", Rho: rho, Seed: seed,
		Truth: []float64{1.5 * 1.5 * c, 1.2 * 1.2 * c, 1, 0, 0, 0},
	}, nil
}

// binaryBeta is the probit coefficient vector of the binary setting.
var binaryBeta = []float64{2.5, 3.5, 0, 0}

// Binary is the paper's 5.2: x ~ N(0, I_4), y ~ Bernoulli(Phi(2.5 x1 +
// 3.5 x2)). Truth is the accuracy VI of the Bayes classifiers, in closed form
// (see BinaryTruth): about (0.136, 0.236, 0, 0).
func Binary(n int, seed int64) (*Data, error) {
	if err := check(n, len(binaryBeta), 0); err != nil {
		return nil, err
	}
	p := len(binaryBeta)
	rng := newRand(seed)
	x := mat.NewDense(n, p+1, nil)
	for i := range n {
		row := x.RawRowView(i)
		var eta float64
		for j, b := range binaryBeta {
			row[j] = rng.NormFloat64()
			eta += b * row[j]
		}
		if rng.Float64() < Phi(eta) {
			row[p] = 1
		}
	}
	return &Data{Setting: "binary", Names: names(p), X: x, Measure: "accuracy", Seed: seed, Truth: BinaryTruth()}, nil
}

// Phi is the standard normal CDF.
func Phi(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }

// BinaryTruth returns the binary setting's true accuracy VI. With
// y ~ Bernoulli(Phi(b'x)), x ~ N(0, I), the regression on x_-j is
// E[y | x_-j] = Phi(b_-j'x_-j / sqrt(1 + b_j²)), a probit with index of
// standard deviation s = |b_-j| / sqrt(1 + b_j²); the Bayes classifier of a
// probit with index sd s has accuracy E[Phi(s|Z|)] = 1/2 + atan(s)/pi. So
// VI_j = (atan(|b|) - atan(|b_-j| / sqrt(1 + b_j²))) / pi.
func BinaryTruth() []float64 {
	var all float64
	for _, b := range binaryBeta {
		all += b * b
	}
	out := make([]float64, len(binaryBeta))
	for j, b := range binaryBeta {
		s := math.Sqrt((all - b*b) / (1 + b*b))
		out[j] = (math.Atan(math.Sqrt(all)) - math.Atan(s)) / math.Pi
	}
	return out
}

// HighDim is the paper's 5.3 with Corr(x1, x2) = 0.5: p = 100,
// beta = (5, 4, 3, 2, 1, 0, ...), y = V relu(W x) + eps with
// W[:, j] ~ N(beta_j, HighDimSigma²) (HighDimHidden x p), V ~ N(0, I)
// (1 x HighDimHidden), both fixed across seeds, eps ~ N(0, NoiseVar).
// Truth is unknown (nil); the measure is mse.
func HighDim(n int, seed int64) (*Data, error) { return highDim(n, 0.5, seed) }

func highDim(n int, rho float64, seed int64) (*Data, error) {
	if err := check(n, HighDimP, rho); err != nil {
		return nil, err
	}
	const p, m = HighDimP, HighDimHidden
	w, v := HighDimNetwork()
	rng := newRand(seed)
	x := mat.NewDense(n, p+1, nil)
	sd := math.Sqrt(NoiseVar)
	for i := range n {
		row := x.RawRowView(i)
		correlated(rng, row[:p], rho)
		y := sd * rng.NormFloat64()
		for k := range m {
			var h float64
			for j, wkj := range w.RawRowView(k) {
				h += wkj * row[j]
			}
			if h > 0 {
				y += v[k] * h
			}
		}
		row[p] = y
	}
	return &Data{Setting: "highdim", Names: names(p), X: x, Measure: "mse", Rho: rho, Seed: seed}, nil
}

// HighDimNetwork returns the high-dimensional setting's fixed network: W
// (HighDimHidden x HighDimP) and V (length HighDimHidden).
func HighDimNetwork() (*mat.Dense, []float64) {
	const p, m = HighDimP, HighDimHidden
	rng := newRand(networkSeed)
	w := mat.NewDense(m, p, nil)
	for j := range p {
		var beta float64
		if j < 5 {
			beta = float64(5 - j)
		}
		for k := range m {
			w.Set(k, j, beta+HighDimSigma*rng.NormFloat64())
		}
	}
	v := make([]float64, m)
	for k := range v {
		v[k] = rng.NormFloat64()
	}
	return w, v
}

// WriteCSV writes a header (x1..xp,y) and one line per sample, each number
// in the shortest form that reads back exactly. It stops at the first
// error of w (a full disk, a cancelled writer).
func (d *Data) WriteCSV(w io.Writer) error {
	bw := bufio.NewWriter(w)
	if _, err := bw.WriteString(strings.Join(d.Names, ",") + "\n"); err != nil {
		return err
	}
	r, c := d.X.Dims()
	var buf []byte
	for i := range r {
		buf = buf[:0]
		for j := range c {
			if j > 0 {
				buf = append(buf, ',')
			}
			buf = strconv.AppendFloat(buf, d.X.At(i, j), 'g', -1, 64)
		}
		buf = append(buf, '\n')
		if _, err := bw.Write(buf); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// TruthJSON describes the data set and its true VI, features in order:
//
//	{"setting":"linear","n":1000,"rho":0.5,"seed":1,"measure":"mse","truth":{"x1":1.6875,...}}
//
// with "truth":null when it is unknown.
func (d *Data) TruthJSON() ([]byte, error) {
	truth := json.RawMessage("null")
	if d.Truth != nil {
		if len(d.Truth) != len(d.Names)-1 {
			return nil, fmt.Errorf("simulate: %d truth values for %d features", len(d.Truth), len(d.Names)-1)
		}
		var b bytes.Buffer
		b.WriteByte('{')
		for j, v := range d.Truth {
			if j > 0 {
				b.WriteByte(',')
			}
			k, _ := json.Marshal(d.Names[j])
			val, err := json.Marshal(v)
			if err != nil {
				return nil, fmt.Errorf("simulate: truth of %s: %w", d.Names[j], err)
			}
			b.Write(k)
			b.WriteByte(':')
			b.Write(val)
		}
		b.WriteByte('}')
		truth = b.Bytes()
	}
	n, _ := d.X.Dims()
	return json.Marshal(struct {
		Setting string          `json:"setting"`
		N       int             `json:"n"`
		Rho     float64         `json:"rho"`
		Seed    int64           `json:"seed"`
		Measure string          `json:"measure"`
		Truth   json.RawMessage `json:"truth"`
	}{d.Setting, n, d.Rho, d.Seed, d.Measure, truth})
}
