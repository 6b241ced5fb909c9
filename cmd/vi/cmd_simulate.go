package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/internal/atomicfile"
	"github.com/lazyvi/lazyvi/simulate"
)

// simulateOptions are the flags of vi simulate.
type simulateOptions struct {
	setting string
	n       int
	rho     float64
	seed    int64
	out     string
}

func newSimulateCommand() *Command {
	var o simulateOptions
	cmd := &Command{
		UsageLine: "simulate [--setting linear|binary|highdim|logistic|friedman1|interaction] [--n N] [--rho R] [--seed S] --out FILE.csv",
		Short:     "write a simulated data set and its true importances",
		Long: `Simulate writes one of the LazyVI paper's simulated data sets (section 5) as a
CSV file with columns x1..xp and the response y last, and next to it
FILE.truth.json with the true variable importance of each feature where it is
known (the .csv suffix of --out is replaced: lin.csv -> lin.truth.json).

Settings:
  linear   p = 6, Corr(x1, x2) = rho, y = 1.5 x1 + 1.2 x2 + x3 + noise;
           true VI under mse (1.5^2(1-rho^2), 1.2^2(1-rho^2), 1, 0, 0, 0).
  binary   p = 4 independent normals, y ~ Bernoulli(Phi(2.5 x1 + 3.5 x2));
           true VI under accuracy (0.136, 0.236, 0, 0). rho must be 0.
  highdim  p = 100, Corr(x1, x2) = rho, y = a fixed random ReLU network of x
           plus noise; the truth is unknown (compare with retrain).
  friedman1 p = 10 uniforms on [0, 1], y = 10 sin(pi x1 x2) + 20 (x3 - 0.5)^2
           + 10 x4 + 5 x5 + N(0, 1); true VI under mse (6.486, 6.486, 2.222,
           8.333, 2.083, 0, ..., 0), by quadrature. rho must be 0.
  interaction p = 8 independent normals, y = 2 x1 x2 + 1.5 x3 x4 + x5 +
           N(0, 0.1); true VI under mse (4, 4, 2.25, 2.25, 1, 0, 0, 0).

The same flags give the same data. Both files are written atomically.

Example:

	vi simulate --setting linear --rho 0.9 --n 2000 --out lin.csv
	vi estimate --data lin.csv --target y`,
	}
	fs := &cmd.Flag
	fs.StringVar(&o.setting, "setting", "linear", "simulated `setting`: linear, binary, highdim, logistic (the appendix's Shapley experiment), friedman1 or interaction (nonadditive, independent features)")
	fs.IntVar(&o.n, "n", 1000, "number of `samples`")
	fs.Float64Var(&o.rho, "rho", 0, "`R` = Corr(x1, x2) (default 0.5 for linear and highdim, 0 for binary, friedman1 and interaction)")
	fs.Int64Var(&o.seed, "seed", defaultSeed, "random `seed`")
	fs.StringVar(&o.out, "out", "", "the CSV `file` to write (required); the truth goes next to it")
	cmd.Run = func(ctx context.Context, a *app, args []string) error { return o.run(ctx, a, cmd, args) }
	return cmd
}

func (o *simulateOptions) run(ctx context.Context, a *app, cmd *Command, args []string) error {
	if err := noArgs(cmd, args); err != nil {
		return err
	}
	if o.out == "" {
		return framework.Usagef("simulate: --out FILE.csv is required")
	}
	if err := checkOutDir("--out", o.out); err != nil {
		return err
	}
	if d, err := atomicfile.Resolve(o.out); err == nil && d.InPlace {
		return framework.Usagef("simulate: --out %s: vi simulate writes a data file and its truth beside it: name a file", o.out)
	}
	if err := checkOutDir("--out's truth file", truthPath(o.out)); err != nil {
		return err
	}
	rho := simulate.DefaultRho(o.setting)
	if givenFlags(cmd)["rho"] {
		rho = o.rho
	}
	d, err := generate(ctx, o.setting, o.n, rho, o.seed)
	if err != nil {
		return err
	}
	truth, err := d.TruthJSON()
	if err != nil {
		return err
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, truth, "", "  "); err != nil {
		return err
	}
	pretty.WriteByte('\n')

	// The data first: if it cannot be written, an earlier run's pair of
	// files is left as it was; if the truth then fails, the error says so.
	truthPath := truthPath(o.out)
	// Streamed, not built in memory first (10 million rows are 1.4 GB of
	// text); a signal stops the writing and leaves no file.
	if err := atomicfile.Write(o.out, func(w io.Writer) error { return d.WriteCSV(ctxWriter{ctx, w}) }); err != nil {
		return runError(ctx, err)
	}
	if err := atomicfile.WriteFile(truthPath, pretty.Bytes()); err != nil {
		return fmt.Errorf("%w (the data was written to %s; its truth was not)", err, o.out)
	}
	n, p := d.X.Dims()
	fmt.Fprintf(a.stderr, "vi: wrote %s (%d rows, %d features, response %s) and %s\n", o.out, n, p-1, d.Names[p-1], truthPath)
	return nil
}

// truthPath is where simulate writes the truth of the CSV file path:
// lin.csv -> lin.truth.json; a path without .csv gets .truth.json appended.
func truthPath(path string) string {
	return strings.TrimSuffix(path, ".csv") + ".truth.json"
}

// generate is simulate.Generate, left to finish in the background when ctx
// is done first: a large n takes seconds to draw, and a signal ends vi at
// once (nothing is written until the data set is complete).
func generate(ctx context.Context, setting string, n int, rho float64, seed int64) (*simulate.Data, error) {
	type result struct {
		d   *simulate.Data
		err error
	}
	done := make(chan result, 1)
	go func() {
		d, err := simulate.Generate(setting, n, rho, seed)
		done <- result{d, err}
	}()
	select {
	case r := <-done:
		return r.d, r.err
	case <-ctx.Done():
		return nil, errInterrupted
	}
}

// ctxWriter fails its writes once ctx is done, so that a long write stops
// at the next buffer's worth.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}
