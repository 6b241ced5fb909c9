package gemm

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/blas/testblas"
)

// fastLevels returns the levels above Generic this CPU runs.
func fastLevels() []Level {
	var ls []Level
	for l := AVX2; l <= Supported(); l++ {
		ls = append(ls, l)
	}
	return ls
}

// withLevel runs f with the active level set to l.
func withLevel(t *testing.T, l Level, f func()) {
	t.Helper()
	saved := active
	active = l
	defer func() { active = saved }()
	f()
}

var transposes = []blas.Transpose{blas.NoTrans, blas.Trans}

// operands are op(A) m x k, op(B) k x n and C m x n, A and B stored
// transposed where tA and tB say.
type operands[T float] struct {
	tA, tB        blas.Transpose
	m, n, k       int
	a, b, c       []T
	lda, ldb, ldc int
}

// newOperands returns operands stored with padded leading dimensions,
// random in [-1, 1).

func newOperands[T float](rng *rand.Rand, tA, tB blas.Transpose, m, n, k int) operands[T] {
	fill := func(n int) []T {
		s := make([]T, n)
		for i := range s {
			s[i] = T(2*rng.Float64() - 1)
		}
		return s
	}
	o := operands[T]{tA: tA, tB: tB, m: m, n: n, k: k}
	aRows, aCols := m, k
	if tA != blas.NoTrans {
		aRows, aCols = k, m
	}
	bRows, bCols := k, n
	if tB != blas.NoTrans {
		bRows, bCols = n, k
	}
	o.lda, o.ldb, o.ldc = aCols+3, bCols+1, n+2
	o.a, o.b, o.c = fill(aRows*o.lda), fill(bRows*o.ldb), fill(m*o.ldc)
	return o
}

// product returns the product C = alpha op(A) op(B) + beta C on o.
func (o operands[T]) product(alpha, beta T) *product[T] {
	return &product[T]{
		m: o.m, n: o.n, k: o.k, alpha: alpha, beta: beta,
		a: matrix[T]{trans: o.tA != blas.NoTrans, data: o.a, stride: o.lda},
		b: matrix[T]{trans: o.tB != blas.NoTrans, data: o.b, stride: o.ldb},
		c: matrix[T]{data: o.c, stride: o.ldc},
	}
}

// at returns op(X)[i][j] of X stored with leading dimension ld.
func at[T float](x []T, ld int, t blas.Transpose, i, j int) T {
	if t != blas.NoTrans {
		return x[j*ld+i]
	}
	return x[i*ld+j]
}

// fma32 is a*b+c rounded once to float32: the product is exact in float64
// and the sum's double rounding is avoided by redoing, exactly, the sums
// that land on a float32 midpoint or outside float32's normal range.
func fma32(a, b, c float32) float32 {
	p := float64(a) * float64(b)
	s := p + float64(c)
	if bits := math.Float64bits(s); bits&(1<<29-1) != 1<<28 && math.Abs(s) >= 0x1p-125 && math.Abs(s) < 0x1p127 {
		return float32(s)
	}
	x := new(big.Float).SetPrec(2000).SetFloat64(p)
	x.Add(x, new(big.Float).SetFloat64(float64(c)))
	f, _ := x.Float32()
	return f
}

func fma64(a, b, c float64) float64 { return math.FMA(a, b, c) }

// reference is the arithmetic the package promises for every element,
// scalar: c = beta*c (0 when beta is 0), then c = fma(alpha*a_l, b_l, c)
// for l in order.
func reference[T float](fma func(a, b, c T) T, o operands[T], alpha, beta T) []T {
	c := append([]T(nil), o.c...)
	for i := range o.m {
		for j := range o.n {
			v := beta * c[i*o.ldc+j]
			if beta == 0 {
				v = 0
			}
			if alpha != 0 {
				for l := range o.k {
					v = fma(alpha*at(o.a, o.lda, o.tA, i, l), at(o.b, o.ldb, o.tB, l, j), v)
				}
			}
			c[i*o.ldc+j] = v
		}
	}
	return c
}

// Shapes around the tiles (6 and 12 rows, 8 to 32 columns) and the k
// block (256 steps).
var bitShapes = [][3]int{
	{1, 1, 1}, {1, 7, 3}, {5, 1, 9}, {6, 8, 1}, {12, 16, 4}, {13, 33, 17},
	{25, 47, 255}, {11, 9, 256}, {7, 40, 257}, {30, 20, 600},
}

// TestBitsMatchScalarFMA checks every fast level, every transposition
// case, alpha and beta (0 with NaN in C, 1, other) to the bit against the
// scalar fused multiply-add reference.
func TestBitsMatchScalarFMA(t *testing.T) {
	levels := fastLevels()
	if len(levels) == 0 {
		t.Skip("no AVX2+FMA on this CPU or build")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, l := range levels {
		f64, f32 := configs(l)
		for _, s := range bitShapes {
			m, n, k := s[0], s[1], s[2]
			for _, tA := range transposes {
				for _, tB := range transposes {
					for _, ab := range [][2]float64{{1, 0}, {1, 1}, {0.3, -0.7}, {-1, 1}, {0, 0.5}} {
						name := fmt.Sprintf("%v/%dx%dx%d/%c%c/alpha=%g,beta=%g", l, m, n, k, tA, tB, ab[0], ab[1])
						o64 := newOperands[float64](rng, tA, tB, m, n, k)
						o32 := newOperands[float32](rng, tA, tB, m, n, k)
						if ab[1] == 0 {
							o64.c[0], o32.c[0] = math.NaN(), float32(math.NaN())
						}
						want64 := reference(fma64, o64, ab[0], ab[1])
						want32 := reference(fma32, o32, float32(ab[0]), float32(ab[1]))
						gemm(f64, o64.product(ab[0], ab[1]))
						gemm(f32, o32.product(float32(ab[0]), float32(ab[1])))
						checkBits(t, name+"/float64", o64.c, want64)
						checkBits(t, name+"/float32", o32.c, want32)
					}
				}
			}
		}
	}
}

func checkBits[T float](t *testing.T, name string, got, want []T) {
	t.Helper()
	for i := range got {
		if got[i] != want[i] && !(got[i] != got[i] && want[i] != want[i]) {
			t.Errorf("%s: element %d = %v, want %v", name, i, got[i], want[i])
			return
		}
	}
}

// TestAccuracy bounds the error of every level against exact sums: with
// unit roundoff u and gamma_j = j u / (1 - j u), each element computed as
// the package does (beta*c, alpha*a_l and k fused multiply-adds, each
// rounded once) is within gamma_(k+2) (|beta c| + sum_l |alpha a_l b_l|)
// of the exact value (Higham, Accuracy and Stability, section 3.1).
func TestAccuracy(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, l := range append([]Level{Generic}, fastLevels()...) {
		withLevel(t, l, func() {
			for _, s := range [][3]int{{9, 14, 3}, {17, 13, 300}, {14, 19, 700}} {
				m, n, k := s[0], s[1], s[2]
				for _, tA := range transposes {
					for _, tB := range transposes {
						name := fmt.Sprintf("%v/%dx%dx%d/%c%c", l, m, n, k, tA, tB)
						alpha, beta := 0.7, -1.3
						o := newOperands[float64](rng, tA, tB, m, n, k)
						want := exactProduct(o, alpha, beta)
						Implementation{}.Dgemm(tA, tB, m, n, k, alpha, o.a, o.lda, o.b, o.ldb, beta, o.c, o.ldc)
						checkBound(t, name+"/float64", o.c, o.ldc, want, gamma(k+2, 0x1p-53))

						o32 := newOperands[float32](rng, tA, tB, m, n, k)
						wide := operands[float64]{
							tA: tA, tB: tB, m: m, n: n, k: k,
							a: widen(o32.a), b: widen(o32.b), c: widen(o32.c), lda: o32.lda, ldb: o32.ldb, ldc: o32.ldc,
						}
						// alpha and beta as float32 rounds them.
						a32, b32 := float32(alpha), float32(beta)
						want = exactProduct(wide, float64(a32), float64(b32))
						Implementation{}.Sgemm(tA, tB, m, n, k, a32, o32.a, o32.lda, o32.b, o32.ldb, b32, o32.c, o32.ldc)
						checkBound(t, name+"/float32", widen(o32.c), o32.ldc, want, gamma(k+2, 0x1p-24))
					}
				}
			}
		})
	}
}

func gamma(j int, u float64) float64 { return float64(j) * u / (1 - float64(j)*u) }

func widen(x []float32) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}

// exact is an m x n product computed exactly: each element rounded once
// from its exact value, and its |beta c| + sum |alpha a_l b_l|.
type exact struct {
	m, n       int
	value, mag []float64
}

// exactProduct returns alpha op(A) op(B) + beta C on o, exactly.
func exactProduct(o operands[float64], alpha, beta float64) exact {
	m, n := o.m, o.n
	e := exact{m: m, n: n, value: make([]float64, m*n), mag: make([]float64, m*n)}
	for i := range m {
		for j := range n {
			sum := new(big.Float).SetPrec(4096).SetFloat64(o.c[i*o.ldc+j])
			sum.Mul(sum, big.NewFloat(beta))
			abs := math.Abs(beta * o.c[i*o.ldc+j])
			term := new(big.Float).SetPrec(4096)
			for l := range o.k {
				x, y := at(o.a, o.lda, o.tA, i, l), at(o.b, o.ldb, o.tB, l, j)
				term.SetFloat64(alpha)
				term.Mul(term, big.NewFloat(x))
				term.Mul(term, big.NewFloat(y))
				sum.Add(sum, term)
				abs += math.Abs(alpha * x * y)
			}
			e.value[i*n+j], _ = sum.Float64()
			e.mag[i*n+j] = abs
		}
	}
	return e
}

// checkBound checks C, stored with leading dimension ldc, within g times
// the magnitudes of the exact product.
func checkBound(t *testing.T, name string, c []float64, ldc int, e exact, g float64) {
	t.Helper()
	n := e.n
	for i := range e.m {
		for j := range n {
			// The bound on magnitudes summed in float64 carries their own
			// rounding (relative gamma_(k+2) at float64's u): 1% covers it.
			err, bound := math.Abs(c[i*ldc+j]-e.value[i*n+j]), 1.01*g*e.mag[i*n+j]
			if !(err <= bound) {
				t.Errorf("%s: C[%d][%d] = %v, exact %v: error %.3g over the bound %.3g", name, i, j, c[i*ldc+j], e.value[i*n+j], err, bound)
				return
			}
		}
	}
}

// TestWorkersDoNotChangeBits runs products large enough to be split across
// goroutines at GOMAXPROCS 1 to 4 and on shapes that split rows only,
// columns too, or both, and, with many steps for their rows and columns,
// run their items through every step block (runDeep) where B is not
// transposed, and requires the same bits each time.
func TestWorkersDoNotChangeBits(t *testing.T) {
	levels := fastLevels()
	if len(levels) == 0 {
		t.Skip("no AVX2+FMA on this CPU or build")
	}
	rng := rand.New(rand.NewPCG(5, 6))
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, l := range levels {
		f64, f32 := configs(l)
		for _, s := range [][3]int{{700, 90, 80}, {40, 500, 300}, {130, 70, 530}, {60, 70, 1100}, {13, 200, 1700}} {
			m, n, k := s[0], s[1], s[2]
			if m*n*k < parallelWork {
				t.Fatalf("%dx%dx%d is below parallelWork: the product would not be split", m, n, k)
			}
			for _, tA := range transposes {
				for _, tB := range transposes {
					o64 := newOperands[float64](rng, tA, tB, m, n, k)
					o32 := newOperands[float32](rng, tA, tB, m, n, k)
					var first64 []float64
					var first32 []float32
					for procs := 1; procs <= 4; procs++ {
						runtime.GOMAXPROCS(procs)
						c64, c32 := append([]float64(nil), o64.c...), append([]float32(nil), o32.c...)
						p64, p32 := o64.product(0.5, 2), o32.product(0.5, 2)
						p64.c.data, p32.c.data = c64, c32
						gemm(f64, p64)
						gemm(f32, p32)
						if procs == 1 {
							first64, first32 = c64, c32
							continue
						}
						name := fmt.Sprintf("%v/%dx%dx%d/%c%c/GOMAXPROCS=%d", l, m, n, k, tA, tB, procs)
						checkBits(t, name+"/float64", c64, first64)
						checkBits(t, name+"/float32", c32, first32)
					}
				}
			}
		}
	}
}

// TestGonumSuite runs gonum's own Dgemm tests on every level.
func TestGonumSuite(t *testing.T) {
	for _, l := range append([]Level{Generic}, fastLevels()...) {
		withLevel(t, l, func() { testblas.TestDgemm(t, Implementation{}) })
	}
}

// TestBadArguments: a bad argument panics as in gonum, with its message.
func TestBadArguments(t *testing.T) {
	a, c := make([]float64, 6), make([]float64, 4)
	for _, tc := range []struct {
		name                      string
		tA                        blas.Transpose
		m, n, k, lda, ldb, ldc, c int
	}{
		{"transpose", 'X', 2, 2, 3, 3, 2, 2, 4},
		{"negative m", blas.NoTrans, -1, 2, 3, 3, 2, 2, 4},
		{"short lda", blas.NoTrans, 2, 2, 3, 2, 2, 2, 4},
		{"short ldc", blas.NoTrans, 2, 2, 3, 3, 2, 1, 4},
		{"short C", blas.NoTrans, 2, 2, 3, 3, 2, 2, 3},
	} {
		want := panicOf(func() {
			gonum.Implementation{}.Dgemm(tc.tA, blas.NoTrans, tc.m, tc.n, tc.k, 1, a, tc.lda, a, tc.ldb, 0, c[:tc.c], tc.ldc)
		})
		for _, l := range append([]Level{Generic}, fastLevels()...) {
			withLevel(t, l, func() {
				got := panicOf(func() {
					Implementation{}.Dgemm(tc.tA, blas.NoTrans, tc.m, tc.n, tc.k, 1, a, tc.lda, a, tc.ldb, 0, c[:tc.c], tc.ldc)
				})
				if want == nil || fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("%v %s: panic %v, want gonum's %v", l, tc.name, got, want)
				}
			})
		}
	}
}

func panicOf(f func()) (v any) {
	defer func() { v = recover() }()
	f()
	return nil
}

func TestChooseLevel(t *testing.T) {
	for _, tc := range []struct {
		env        string
		best, want Level
	}{
		{"", AVX512, AVX512},
		{"generic", AVX512, Generic},
		{"AVX2", AVX512, AVX2},
		{" avx512 ", AVX2, AVX2},
		{"avx512", AVX512, AVX512},
		{"sse9", AVX2, AVX2},
		{"avx2", Generic, Generic},
	} {
		if got := chooseLevel(tc.env, tc.best); got != tc.want {
			t.Errorf("chooseLevel(%q, %v) = %v, want %v", tc.env, tc.best, got, tc.want)
		}
	}
}
