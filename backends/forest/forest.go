package forest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/internal/sysmem"
)

// Config sets up a forest. The zero value of a field means its default.
type Config struct {
	// Classes is 0 for regression, or K >= 2 for classification with
	// labels 0..K-1.
	Classes int
	// Trees is the number of trees (default 100).
	Trees int
	// MaxDepth bounds the depth of a tree (the root has depth 0); 0 means
	// no bound.
	MaxDepth int
	// MinLeaf is the least number of training rows (counted with their
	// bootstrap repeats) in a leaf; default 5 for regression, 1 for
	// classification (randomForest's nodesize).
	MinLeaf int
	// MTry is the number of features drawn at random as split candidates at
	// each node; default max(1, p/3) for regression and floor(sqrt(p)) for
	// classification (Breiman's and randomForest's choices).
	MTry int
	// NoBootstrap grows every tree on all rows instead of a bootstrap
	// sample (then there is no out-of-bag error).
	NoBootstrap bool
	// Workers bounds the trees grown (and rows predicted) at a time;
	// default runtime.GOMAXPROCS(0). The forest does not depend on it.
	Workers int
	// Seed seeds every random choice: tree t draws its bootstrap sample
	// and its split candidates from its own generator, PCG(Seed, t), so the
	// same seed and data give the same forest whatever Workers is.
	Seed int64
}

// withDefaults fills the zero fields for p features.
func (c Config) withDefaults(p int) Config {
	if c.Trees == 0 {
		c.Trees = 100
	}
	if c.MinLeaf == 0 {
		c.MinLeaf = 5
		if c.Classes > 0 {
			c.MinLeaf = 1
		}
	}
	if c.MTry == 0 {
		if c.Classes > 0 {
			c.MTry = int(math.Sqrt(float64(p)))
		} else {
			c.MTry = p / 3
		}
		c.MTry = max(c.MTry, 1)
	}
	c.MTry = min(c.MTry, p)
	if c.Workers <= 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	return c
}

func (c Config) check() error {
	switch {
	case c.Classes < 0 || c.Classes == 1:
		return fmt.Errorf("forest: Classes must be 0 (regression) or at least 2, got %d", c.Classes)
	case c.Trees < 0:
		return fmt.Errorf("forest: Trees must be positive, got %d", c.Trees)
	case c.MaxDepth < 0:
		return fmt.Errorf("forest: MaxDepth must be >= 0, got %d", c.MaxDepth)
	case c.MinLeaf < 0:
		return fmt.Errorf("forest: MinLeaf must be positive, got %d", c.MinLeaf)
	case c.MTry < 0:
		return fmt.Errorf("forest: MTry must be positive, got %d", c.MTry)
	}
	return nil
}

// treeBytes bounds the memory of one tree grown on n rows: at most
// n/MinLeaf leaves (each holding MinLeaf rows of the bootstrap sample), so
// twice as many nodes, each leaf's class shares, and the bootstrap
// membership bits. In float64, so that no count overflows it.
func treeBytes(cfg Config, n int) float64 {
	leaves := math.Ceil(float64(n) / float64(max(cfg.MinLeaf, 1)))
	return 2*leaves*float64(unsafe.Sizeof(node{})) + 8*leaves*float64(cfg.Classes) + 8*math.Ceil(float64(n)/64)
}

// checkMemory refuses, as a usage error before anything is allocated, a
// forest whose trees may need more memory than the machine has: an
// absurd count of trees is the user's mistake, not an out-of-memory
// crash.
func checkMemory(cfg Config, n int) error {
	need, have := float64(cfg.Trees)*treeBytes(cfg, n), float64(sysmem.Total())
	if need <= have {
		return nil
	}
	return framework.Usagef("forest: option trees: %d trees on %d rows may need up to %.3g GB, more than this machine's %.3g GB of memory; use fewer trees (or a larger min_leaf)",
		cfg.Trees, n, need/1e9, have/1e9)
}

// Forest is a fitted random forest. It is read-only and safe for
// concurrent use.
type Forest struct {
	cfg   Config
	p     int
	ymean float64 // regression: trees predict y - ymean
	trees []*tree
	oob   OOB
}

// OOB is the out-of-bag error: each training row predicted by the trees
// whose bootstrap sample left it out.
type OOB struct {
	// N is the number of rows left out by at least one tree (the others
	// have no out-of-bag prediction and do not count).
	N int
	// Regression: mean squared error, and R^2 = 1 - MSE / Var(y) (Var with
	// denominator N, over the same rows).
	MSE, R2 float64
	// Classification: the share of rows whose most probable class (the
	// out-of-bag trees' mean class shares) is wrong, and the mean
	// log-loss of those shares (clipped at 1e-15).
	ErrorRate, LogLoss float64
}

// Fit grows a forest on the rows of x with responses y (class labels
// 0..Classes-1 for classification).
func Fit(ctx context.Context, x mat.Matrix, y []float64, cfg Config) (*Forest, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	n, p := x.Dims()
	if n == 0 || p == 0 {
		return nil, errors.New("forest: empty input")
	}
	if len(y) != n {
		return nil, fmt.Errorf("forest: %d rows but %d responses", n, len(y))
	}
	cfg = cfg.withDefaults(p)
	if err := checkMemory(cfg, n); err != nil {
		return nil, err
	}
	d := &data{n: n, p: p, cols: make([][]float64, p), classes: cfg.Classes}
	for k := range d.cols {
		d.cols[k] = make([]float64, n)
	}
	for i := 0; i < n; i++ {
		for k := 0; k < p; k++ {
			v := x.At(i, k)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("forest: input row %d, column %d is not finite", i, k)
			}
			d.cols[k][i] = v
		}
	}
	f := &Forest{cfg: cfg, p: p, trees: make([]*tree, cfg.Trees)}
	if cfg.Classes > 0 {
		d.class = make([]int32, n)
		for i, v := range y {
			c := int(v)
			if float64(c) != v || c < 0 || c >= cfg.Classes {
				return nil, fmt.Errorf("forest: row %d: class label %v is not an integer in [0, %d)", i, v, cfg.Classes)
			}
			d.class[i] = int32(c)
		}
	} else {
		// Centred responses keep the split criterion's sums away from
		// cancellation.
		s := 0.0
		for i, v := range y {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("forest: response in row %d is not finite", i)
			}
			s += v
		}
		f.ymean = s / float64(n)
		d.y = make([]float64, n)
		for i, v := range y {
			d.y[i] = v - f.ymean
		}
	}

	inBag := make([][]uint64, cfg.Trees) // bootstrap membership bitsets
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < min(cfg.Workers, cfg.Trees); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := &builder{d: d, cfg: &cfg, mtry: cfg.MTry, feats: make([]int, p),
				pairs: make([]pair, n), countL: make([]float64, cfg.Classes), countT: make([]float64, cfg.Classes)}
			idx := make([]int32, n)
			for {
				t := int(next.Add(1) - 1)
				if t >= cfg.Trees || ctx.Err() != nil {
					return
				}
				b.rng = rand.New(rand.NewPCG(uint64(cfg.Seed), uint64(t)^treeStream))
				for k := range b.feats {
					b.feats[k] = k
				}
				if cfg.NoBootstrap {
					for i := range idx {
						idx[i] = int32(i)
					}
				} else {
					bits := make([]uint64, (n+63)/64)
					for i := range idx {
						r := b.rng.IntN(n)
						idx[i] = int32(r)
						bits[r/64] |= 1 << (r % 64)
					}
					inBag[t] = bits
				}
				f.trees[t] = b.grow(idx)
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("forest: %w", err)
	}
	if !cfg.NoBootstrap {
		f.oob = f.outOfBag(x, y, inBag)
	}
	return f, nil
}

// treeStream is xored into the tree index to form the PCG stream.
const treeStream = 0x666f726573742d31 // "forest-1"

// Trees returns the number of trees.
func (f *Forest) Trees() int { return len(f.trees) }

// Classes returns the number of classes (0 for regression).
func (f *Forest) Classes() int { return f.cfg.Classes }

// Config returns the configuration with the defaults filled in.
func (f *Forest) Config() Config { return f.cfg }

// OOB returns the out-of-bag error; ok is false when the trees were grown
// without bootstrap.
func (f *Forest) OOB() (oob OOB, ok bool) { return f.oob, !f.cfg.NoBootstrap }

// outOfBag predicts each training row with the trees that left it out,
// summing over trees in tree order so that the result does not depend on
// the scheduling.
func (f *Forest) outOfBag(x mat.Matrix, y []float64, inBag [][]uint64) OOB {
	n, _ := x.Dims()
	k := max(f.cfg.Classes, 1)
	sums := make([]float64, n*k)
	counts := make([]int, n)
	f.rows(x, func(i int, row []float64) {
		for t, tr := range f.trees {
			if inBag[t][i/64]&(1<<(i%64)) != 0 {
				continue
			}
			counts[i]++
			f.addLeaf(sums[i*k:(i+1)*k], tr, row)
		}
	})
	var o OOB
	var se, sy, syy, wrong, ll float64
	for i := 0; i < n; i++ {
		if counts[i] == 0 {
			continue
		}
		o.N++
		c := float64(counts[i])
		if f.cfg.Classes == 0 {
			pred := f.ymean + sums[i]/c
			se += (y[i] - pred) * (y[i] - pred)
			sy += y[i]
			syy += y[i] * y[i]
			continue
		}
		pr := sums[i*k : (i+1)*k]
		arg := 0
		for j := range pr {
			if pr[j] > pr[arg] {
				arg = j
			}
		}
		if arg != int(y[i]) {
			wrong++
		}
		ll -= math.Log(math.Max(pr[int(y[i])]/c, 1e-15))
	}
	if o.N == 0 {
		o.MSE, o.R2, o.ErrorRate, o.LogLoss = math.NaN(), math.NaN(), math.NaN(), math.NaN()
		return o
	}
	m := float64(o.N)
	if f.cfg.Classes == 0 {
		o.MSE = se / m
		v := syy/m - (sy/m)*(sy/m)
		o.R2 = 1 - o.MSE/v
		o.ErrorRate, o.LogLoss = math.NaN(), math.NaN()
	} else {
		o.ErrorRate, o.LogLoss = wrong/m, ll/m
		o.MSE, o.R2 = math.NaN(), math.NaN()
	}
	return o
}

// addLeaf adds tree tr's prediction for row (centred mean, or class
// shares) to acc.
func (f *Forest) addLeaf(acc []float64, tr *tree, row []float64) {
	nd := tr.leafOf(row)
	if k := f.cfg.Classes; k > 0 {
		off := int(nd.value) * k
		for c, v := range tr.probs[off : off+k] {
			acc[c] += v
		}
		return
	}
	acc[0] += nd.value
}

// rows calls fn for every row of x, Workers rows-blocks at a time.
func (f *Forest) rows(x mat.Matrix, fn func(i int, row []float64)) {
	n, p := x.Dims()
	var raw mat.RawMatrixer
	if rm, ok := x.(mat.RawMatrixer); ok {
		raw = rm
	}
	const block = 64
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < min(f.cfg.Workers, (n+block-1)/block); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]float64, p)
			for {
				lo := int(next.Add(block) - block)
				if lo >= n {
					return
				}
				for i := lo; i < min(lo+block, n); i++ {
					row := buf
					if raw != nil {
						m := raw.RawMatrix()
						row = m.Data[i*m.Stride : i*m.Stride+p]
					} else {
						for k := range buf {
							buf[k] = x.At(i, k)
						}
					}
					fn(i, row)
				}
			}
		}()
	}
	wg.Wait()
}

// Predict returns, for regression, the mean of the trees' predictions for
// each row of x, and for classification the mean class shares (n x K).
func (f *Forest) Predict(x mat.Matrix) (*mat.Dense, error) {
	n, p := x.Dims()
	if p != f.p {
		return nil, fmt.Errorf("forest: input has %d columns, forest expects %d", p, f.p)
	}
	if n == 0 {
		return nil, errors.New("forest: input has no rows")
	}
	k := max(f.cfg.Classes, 1)
	out := mat.NewDense(n, k, nil)
	raw := out.RawMatrix()
	inv := 1 / float64(len(f.trees))
	f.rows(x, func(i int, row []float64) {
		acc := raw.Data[i*k : (i+1)*k]
		for _, tr := range f.trees {
			f.addLeaf(acc, tr, row)
		}
		for c := range acc {
			acc[c] *= inv
		}
		if f.cfg.Classes == 0 {
			acc[0] += f.ymean
		}
	})
	return out, nil
}
