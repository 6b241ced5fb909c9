package simulate

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
	"gonum.org/v1/gonum/floats/scalar"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
)

func TestDeterministic(t *testing.T) {
	for _, s := range Settings() {
		rho := 0.3
		if s == "binary" || s == "friedman1" || s == "interaction" {
			rho = 0 // independent features
		}
		a, err := Generate(s, 50, rho, 42)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := Generate(s, 50, rho, 42)
		c, _ := Generate(s, 50, rho, 43)
		if !mat.Equal(a.X, b.X) {
			t.Errorf("%s: same seed, different data", s)
		}
		if mat.Equal(a.X, c.X) {
			t.Errorf("%s: different seeds, same data", s)
		}
		r, col := a.X.Dims()
		if r != 50 || col != len(a.Names) || a.Names[col-1] != "y" || a.Names[0] != "x1" {
			t.Errorf("%s: want 50 x %d with names x1..y, got %d x %d, %q", s, len(a.Names), r, col, a.Names)
		}
		if a.Truth != nil && len(a.Truth) != col-1 {
			t.Errorf("%s: %d truth values for %d features", s, len(a.Truth), col-1)
		}
	}
}

func TestGenerateErrors(t *testing.T) {
	cases := []struct {
		setting string
		n       int
		rho     float64
		want    string
	}{
		{"nonlinear", 10, 0, "unknown setting \"nonlinear\" (have binary, friedman1, highdim, interaction, linear, logistic)"},
		{"linear", 0, 0, "must be positive"},
		{"linear", 10, 1.5, "rho must be a correlation"},
		{"linear", 10, math.NaN(), "rho must be a correlation"},
		{"binary", 10, 0.5, "rho must be 0"},
	}
	for i, c := range cases {
		_, err := Generate(c.setting, c.n, c.rho, 1)
		if err == nil || !errors.Is(err, framework.ErrUsage) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Case %d: want usage error containing %q, got %v", i, c.want, err)
		}
	}
}

// TestLinearDesign checks the sample covariance of x and the OLS
// coefficients and noise variance against the design, each within 4.5
// standard errors.
func TestLinearDesign(t *testing.T) {
	const n, rho, p = 20000, 0.6, 6
	d, err := Linear(n, rho, 7)
	if err != nil {
		t.Fatal(err)
	}
	x := d.X.Slice(0, n, 0, p).(*mat.Dense)
	y := mat.Col(nil, p, d.X)
	var cov mat.SymDense
	stat.CovarianceMatrix(&cov, x, nil)
	for i := range p {
		for j := i; j < p; j++ {
			want := 0.0
			if i == j {
				want = 1
			} else if i == 0 && j == 1 {
				want = rho
			}
			se := math.Sqrt((1 + want*want) / n) // sd of a product of two normals / sqrt(n)
			if got := cov.At(i, j); math.Abs(got-want) > 4.5*se {
				t.Errorf("Cov(x%d, x%d): want %v ± %.4f, got %v", i+1, j+1, want, 4.5*se, got)
			}
		}
	}
	// OLS without intercept: beta_hat ~ N(beta, NoiseVar (X'X)^-1).
	var xtx mat.Dense
	xtx.Mul(x.T(), x)
	var inv mat.Dense
	if err := inv.Inverse(&xtx); err != nil {
		t.Fatal(err)
	}
	var bh mat.VecDense
	var xty mat.VecDense
	xty.MulVec(x.T(), mat.NewVecDense(n, y))
	bh.MulVec(&inv, &xty)
	beta := []float64{1.5, 1.2, 1, 0, 0, 0}
	for j := range p {
		se := math.Sqrt(NoiseVar * inv.At(j, j))
		if math.Abs(bh.AtVec(j)-beta[j]) > 4.5*se {
			t.Errorf("beta_%d: want %v ± %.4f, got %v", j+1, beta[j], 4.5*se, bh.AtVec(j))
		}
	}
	var fit mat.VecDense
	fit.MulVec(x, &bh)
	var rss float64
	for i := range n {
		r := y[i] - fit.AtVec(i)
		rss += r * r
	}
	s2 := rss / (n - p)
	if se := NoiseVar * math.Sqrt(2.0/n); math.Abs(s2-NoiseVar) > 4.5*se {
		t.Errorf("noise variance: want %v ± %.4f, got %v", NoiseVar, 4.5*se, s2)
	}
}

// ols returns the residuals of y regressed on the columns cols of x.
func ols(x *mat.Dense, y []float64, cols []int) []float64 {
	n, _ := x.Dims()
	z := mat.NewDense(n, len(cols), nil)
	for k, j := range cols {
		z.SetCol(k, mat.Col(nil, j, x))
	}
	var qr mat.QR
	qr.Factorize(z)
	var b mat.Dense
	if err := qr.SolveTo(&b, false, mat.NewDense(n, 1, append([]float64(nil), y...))); err != nil {
		panic(err)
	}
	var fit mat.Dense
	fit.Mul(z, &b)
	r := make([]float64, n)
	for i := range r {
		r[i] = y[i] - fit.At(i, 0)
	}
	return r
}

// TestLinearTruth checks the MSE VI against the population truth: for
// Gaussian data E[y | x_-j] is linear, so OLS on x_-j estimates the reduced
// model; VI_j = mean(r_red² - r_full²), within 4.5 of its standard errors.
func TestLinearTruth(t *testing.T) {
	const n, rho, p = 100000, 0.75, 6
	d, err := Linear(n, rho, 11)
	if err != nil {
		t.Fatal(err)
	}
	y := mat.Col(nil, p, d.X)
	all := []int{0, 1, 2, 3, 4, 5}
	full := ols(d.X, y, all)
	diff := make([]float64, n)
	for j := range p {
		var cols []int
		for _, k := range all {
			if k != j {
				cols = append(cols, k)
			}
		}
		red := ols(d.X, y, cols)
		for i := range diff {
			diff[i] = red[i]*red[i] - full[i]*full[i]
		}
		vi, sd := stat.MeanStdDev(diff, nil)
		se := sd / math.Sqrt(n)
		t.Logf("linear rho=%.2f: VI_x%d = %.4f (se %.4f), truth %.4f", rho, j+1, vi, se, d.Truth[j])
		if math.Abs(vi-d.Truth[j]) > 4.5*se+1e-3 {
			t.Errorf("VI_x%d: want %v, got %v (se %v)", j+1, d.Truth[j], vi, se)
		}
	}
}

// TestBinaryTruth verifies the binary setting's truth by Monte Carlo on a
// large sample it generates: the accuracy of the Bayes classifier of the full
// model (sign of 2.5 x1 + 3.5 x2) minus that of the reduced models
// (E[Y | x2] = Phi(3.5 x2 / sqrt(1 + 2.5²)), so the sign of x2; likewise
// x1 without x2), both as the observed 0/1 accuracy and as the lower-variance
// E[max(q, 1-q)] with q the regression function.
func TestBinaryTruth(t *testing.T) {
	n := 1000000
	if testing.Short() {
		n = 100000
	}
	truth := BinaryTruth()
	if math.Round(truth[0]*1000) != 136 || math.Round(truth[1]*1000) != 236 || truth[2] != 0 || truth[3] != 0 {
		t.Errorf("want truth (0.136, 0.236, 0, 0) to 3 decimals, got %v", truth)
	}
	d, err := Binary(n, 2022)
	if err != nil {
		t.Fatal(err)
	}
	var ybar float64
	drop1, drop2 := make([]float64, n), make([]float64, n) // correct(full) - correct(reduced)
	bayes1, bayes2 := make([]float64, n), make([]float64, n)
	var accFull, acc1, acc2 float64
	s1 := 3.5 / math.Sqrt(1+2.5*2.5) // E[Y|x2] = Phi(s1 x2)
	s2 := 2.5 / math.Sqrt(1+3.5*3.5) // E[Y|x1] = Phi(s2 x1)
	correct := func(score, y float64) float64 {
		if (score > 0) == (y == 1) {
			return 1
		}
		return 0
	}
	maxq := func(q float64) float64 { return math.Max(q, 1-q) }
	for i := range n {
		x1, x2, y := d.X.At(i, 0), d.X.At(i, 1), d.X.At(i, 4)
		ybar += y
		cf := correct(2.5*x1+3.5*x2, y)
		c1 := correct(x2, y)
		c2 := correct(x1, y)
		accFull += cf
		acc1 += c1
		acc2 += c2
		drop1[i], drop2[i] = cf-c1, cf-c2
		full := maxq(Phi(2.5*x1 + 3.5*x2))
		bayes1[i] = full - maxq(Phi(s1*x2))
		bayes2[i] = full - maxq(Phi(s2*x1))
	}
	fn := float64(n)
	t.Logf("binary, n=%d: P(Y=1) = %.4f; accuracy full %.4f, without x1 %.4f, without x2 %.4f (closed form %.4f, %.4f, %.4f)",
		n, ybar/fn, accFull/fn, acc1/fn, acc2/fn,
		0.5+math.Atan(math.Sqrt(2.5*2.5+3.5*3.5))/math.Pi, 0.5+math.Atan(s1)/math.Pi, 0.5+math.Atan(s2)/math.Pi)
	for j, diff := range [][]float64{drop1, drop2, bayes1, bayes2} {
		vi, sd := stat.MeanStdDev(diff, nil)
		se := sd / math.Sqrt(fn)
		k := j % 2
		kind := "observed 0/1"
		if j >= 2 {
			kind = "E[max(q,1-q)]"
		}
		t.Logf("VI_x%d (%s) = %.3f (%.5f, se %.5f); closed form %.5f", k+1, kind, vi, vi, se, truth[k])
		if math.Abs(vi-truth[k]) > 4.5*se {
			t.Errorf("VI_x%d (%s): want %v, got %v (se %v)", k+1, kind, truth[k], vi, se)
		}
	}
	if math.Abs(ybar/fn-0.5) > 4.5*0.5/math.Sqrt(fn) {
		t.Errorf("want P(Y=1) = 0.5, got %v", ybar/fn)
	}
}

func TestHighDim(t *testing.T) {
	d, err := HighDim(4000, 3)
	if err != nil {
		t.Fatal(err)
	}
	r, c := d.X.Dims()
	if r != 4000 || c != HighDimP+1 || d.Truth != nil || d.Measure != "mse" || d.Rho != 0.5 {
		t.Fatalf("want 4000 x 101, nil truth, mse, rho 0.5; got %d x %d, %v, %q, %v", r, c, d.Truth, d.Measure, d.Rho)
	}
	if got := stat.Correlation(mat.Col(nil, 0, d.X), mat.Col(nil, 1, d.X), nil); math.Abs(got-0.5) > 4.5*(1-0.25)/math.Sqrt(4000) {
		t.Errorf("Corr(x1, x2): want 0.5, got %v", got)
	}
	// y is the network's output plus noise of variance NoiseVar.
	w, v := HighDimNetwork()
	var ss float64
	for i := range r {
		row := d.X.RawRowView(i)
		var f float64
		for k := range HighDimHidden {
			h := mat.Dot(w.RowView(k), mat.NewVecDense(HighDimP, row[:HighDimP]))
			f += v[k] * math.Max(h, 0)
		}
		ss += (row[HighDimP] - f) * (row[HighDimP] - f)
	}
	if got, se := ss/float64(r), NoiseVar*math.Sqrt(2.0/float64(r)); math.Abs(got-NoiseVar) > 4.5*se {
		t.Errorf("noise variance: want %v, got %v", NoiseVar, got)
	}
	// W's columns are centred at beta with sd HighDimSigma.
	for j, b := range []float64{5, 4, 3, 2, 1, 0} {
		m := stat.Mean(mat.Col(nil, j, w), nil)
		if math.Abs(m-b) > 4.5*HighDimSigma/math.Sqrt(HighDimHidden) {
			t.Errorf("mean of W[:, %d]: want %v, got %v", j, b, m)
		}
	}
	js, err := d.TruthJSON()
	if err != nil || !strings.HasSuffix(string(js), `"truth":null}`) {
		t.Errorf("want truth null, got %s, %v", js, err)
	}
}

func TestWriteCSVRoundTrip(t *testing.T) {
	d, err := Linear(30, -0.4, 5)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := d.WriteCSV(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(buf.String(), "x1,x2,x3,x4,x5,x6,y\n") {
		t.Errorf("header: got %q", strings.SplitN(buf.String(), "\n", 2)[0])
	}
	back, err := dataio.ReadCSV(&buf, "sim.csv")
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(back.X, d.X) || strings.Join(back.Names, ",") != strings.Join(d.Names, ",") {
		t.Error("CSV does not read back exactly")
	}
}

func TestTruthJSON(t *testing.T) {
	d, err := Generate("linear", 10, 0.5, 9)
	if err != nil {
		t.Fatal(err)
	}
	js, err := d.TruthJSON()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"setting":"linear","n":10,"rho":0.5,"seed":9,"measure":"mse","truth":{"x1":1.6875,"x2":1.08,"x3":1,"x4":0,"x5":0,"x6":0}}`
	if string(js) != want {
		// 1.2²·0.75 is 1.0799999999999998 in floating point; compare by value.
		var got, exp map[string]any
		if json.Unmarshal(js, &got) != nil || json.Unmarshal([]byte(want), &exp) != nil {
			t.Fatalf("invalid JSON %s", js)
		}
		tg, te := got["truth"].(map[string]any), exp["truth"].(map[string]any)
		for k, v := range te {
			if !scalar.EqualWithinAbsOrRel(tg[k].(float64), v.(float64), 1e-12, 1e-12) {
				t.Errorf("truth %s: want %v, got %v", k, v, tg[k])
			}
		}
		if i := strings.Index(string(js), `"truth":{"x1"`); i < 0 || !strings.Contains(string(js), `"x5":0,"x6":0}`) {
			t.Errorf("want ordered truth object, got %s", js)
		}
		delete(got, "truth")
		delete(exp, "truth")
		gb, _ := json.Marshal(got)
		eb, _ := json.Marshal(exp)
		if string(gb) != string(eb) {
			t.Errorf("want %s, got %s", eb, gb)
		}
	}
	b, _ := Binary(5, 1)
	js, _ = b.TruthJSON()
	if !strings.Contains(string(js), `"setting":"binary","n":5,"rho":0,"seed":1,"measure":"accuracy","truth":{"x1":0.13`) {
		t.Errorf("binary: got %s", js)
	}
}

// TestTooManySamples: a count of samples whose matrix cannot fit in the
// machine's memory is a usage error before it is allocated (n 1e12 ran
// the runtime out of memory), in every setting.
func TestTooManySamples(t *testing.T) {
	for _, s := range []string{"linear", "binary", "highdim", "logistic", "friedman1", "interaction"} {
		rho := 0.0
		_, err := Generate(s, 1e12, rho, 1)
		if !errors.Is(err, framework.ErrUsage) || !strings.Contains(err.Error(), "1000000000000 samples of") {
			t.Errorf("%s, n 1e12: %v, want a usage error on the samples' memory", s, err)
		}
	}
}

// failAfter accepts n writes and fails every one after them.
type failAfter struct{ n, calls int }

func (f *failAfter) Write(p []byte) (int, error) {
	f.calls++
	if f.calls > f.n {
		return 0, errors.New("disk full")
	}
	return len(p), nil
}

// TestWriteCSVStopsAtFirstError: a writer that fails (a full disk, a
// cancelled run) ends WriteCSV with its error at once, not after every row
// is formatted.
func TestWriteCSVStopsAtFirstError(t *testing.T) {
	d, err := Linear(200000, 0.5, 1)
	if err != nil {
		t.Fatal(err)
	}
	w := &failAfter{n: 2}
	if err := d.WriteCSV(w); err == nil || err.Error() != "disk full" {
		t.Fatalf("WriteCSV = %v, want the writer's error", err)
	}
	if w.calls != 3 {
		t.Errorf("%d writes, want 3: the failing write ends it", w.calls)
	}
}
