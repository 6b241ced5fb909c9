package cnn

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
)

// gradData is a 5x4 image data set (a non-square image, pooling leaves a
// remainder row) with a response for the task.
func gradData(n int, task framework.Task, seed uint64) (*mat.Dense, []float64) {
	rng := rand.New(rand.NewPCG(seed, 0x9))
	x := mat.NewDense(n, 20, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		r := x.RawRowView(i)
		for k := range r {
			r[k] = rng.NormFloat64()
		}
		s := r[5] + r[6] - r[13] + 0.5*r[0]*r[19]
		switch task {
		case framework.Binary:
			if s > 0 {
				y[i] = 1
			}
		case framework.Multiclass:
			y[i] = float64(i % 3)
		default:
			y[i] = s
		}
	}
	return x, y
}

// TestJacobianFiniteDifferences checks every parameter of every block
// (convolution weights and bias, each dense layer's weights and bias)
// against central differences of PredictShifted, for each task and both
// poolings.
func TestJacobianFiniteDifferences(t *testing.T) {
	ctx := context.Background()
	for _, task := range []framework.Task{framework.Regression, framework.Binary, framework.Multiclass} {
		for _, pool := range []string{"max", "avg"} {
			t.Run(fmt.Sprintf("%v/%s", task, pool), func(t *testing.T) {
				spec := framework.ModelSpec{Task: task, Inputs: 20, Seed: 3, Options: map[string]string{
					"image": "5x4", "filters": "3", "hidden": "5,4", "pool_kind": pool, "epochs": "3"}}
				if task == framework.Multiclass {
					spec.Classes = 3
				}
				md, err := NewModel(spec)
				if err != nil {
					t.Fatal(err)
				}
				x, y := gradData(60, task, 1)
				if err := md.Fit(ctx, x, y); err != nil {
					t.Fatal(err)
				}
				xs := x.Slice(0, 6, 0, 20).(*mat.Dense)
				jac, err := md.Jacobian(ctx, xs)
				if err != nil {
					t.Fatal(err)
				}
				rows, M := jac.Dims()
				if M != md.NumParams() {
					t.Fatalf("Jacobian has %d columns for %d parameters", M, md.NumParams())
				}
				blocks := map[string][2]int{"conv weights": {md.cw, md.cb}, "conv bias": {md.cb, md.cb + md.f}}
				for l, ly := range md.layers {
					blocks[fmt.Sprintf("dense %d weights", l)] = [2]int{ly.w, ly.b}
					blocks[fmt.Sprintf("dense %d bias", l)] = [2]int{ly.b, ly.b + ly.out}
				}
				const h = 1e-6
				covered := 0
				for name, b := range blocks {
					for k := b[0]; k < b[1]; k++ {
						covered++
						plus, minus := make([]float64, M), make([]float64, M)
						plus[k], minus[k] = h, -h
						pp, _ := md.PredictShifted(ctx, xs, plus)
						pm, _ := md.PredictShifted(ctx, xs, minus)
						fp, fm := pp.RawMatrix().Data, pm.RawMatrix().Data
						for r := 0; r < rows; r++ {
							fd := (fp[r] - fm[r]) / (2 * h)
							if d := math.Abs(fd - jac.At(r, k)); d > 1e-6*math.Max(1, math.Abs(fd)) {
								t.Fatalf("%s, parameter %d, row %d: finite difference %.9g, Jacobian %.9g", name, k, r, fd, jac.At(r, k))
							}
						}
					}
				}
				if covered != M {
					t.Fatalf("blocks cover %d of %d parameters", covered, M)
				}
			})
		}
	}
}

// TestTrainingGradient checks the minibatch loss gradient that training
// uses against finite differences of the loss.
func TestTrainingGradient(t *testing.T) {
	for _, task := range []framework.Task{framework.Regression, framework.Binary, framework.Multiclass} {
		spec := framework.ModelSpec{Task: task, Inputs: 20, Seed: 5, Options: map[string]string{"image": "5x4", "filters": "2", "hidden": "3"}}
		if task == framework.Multiclass {
			spec.Classes = 3
		}
		md, err := NewModel(spec)
		if err != nil {
			t.Fatal(err)
		}
		x, y := gradData(10, task, 2)
		target, err := md.head.Targets(y)
		if err != nil {
			t.Fatal(err)
		}
		theta := md.initParams(rand.New(rand.NewPCG(1, 2)))
		xg := x.RawMatrix()
		p := md.newPass(10)
		out := md.forward(theta, xg, p)
		dout := make([]float64, 10*md.head.Outs)
		md.head.LossGrad(out, target, dout)
		grad := make([]float64, md.m)
		md.backward(theta, p, dout, md.newSignals(10), grad, make([]float64, 10*md.d))
		const h = 1e-6
		for k := 0; k < md.m; k++ {
			tp := append([]float64(nil), theta...)
			tm := append([]float64(nil), theta...)
			tp[k] += h
			tm[k] -= h
			fd := (md.head.Loss(md.forward(tp, xg, p), target) - md.head.Loss(md.forward(tm, xg, p), target)) / (2 * h)
			if d := math.Abs(fd - grad[k]); d > 1e-6*math.Max(1, math.Abs(fd)) {
				t.Fatalf("%v: parameter %d: finite difference %.9g, gradient %.9g", task, k, fd, grad[k])
			}
		}
	}
}

func TestOptions(t *testing.T) {
	bad := []map[string]string{
		{"image": "8x9"}, {"image": "nope"}, {"kernel": "2"}, {"pool": "9"}, {"pool_kind": "min"}, {"hidden": "a"}, {"lr": "0"},
	}
	for _, o := range bad {
		if _, err := NewModel(framework.ModelSpec{Inputs: 64, Options: o}); err == nil {
			t.Errorf("options %v: want an error", o)
		}
	}
	if _, err := NewModel(framework.ModelSpec{Inputs: 63}); err == nil {
		t.Errorf("63 inputs without an image shape: want an error")
	}
	md, err := NewModel(framework.ModelSpec{Inputs: 64, Options: map[string]string{"image": "8x8", "hidden": ""}})
	if err != nil {
		t.Fatal(err)
	}
	// 16 filters of 3x3 (+16), 4x4x16 pooled features to one output.
	if want := 16*9 + 16 + 256 + 1; md.NumParams() != want {
		t.Errorf("NumParams: want %d, got %d", want, md.NumParams())
	}
}
