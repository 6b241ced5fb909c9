package gemm

import (
	"runtime"
	"sync"
	"sync/atomic"
)

type float interface{ ~float32 | ~float64 }

// config is one micro-kernel with the blocking that feeds it: tiles of C
// are mr x nr, k is taken kc steps at a time (a packed B panel of kc x nr
// stays in L1), rows mc at a time (a packed A block in L2), columns nc at a
// time (a packed B block in L3).
type config[T float] struct {
	kern          func(k int, a, b, c *T, ldc int, beta T, mode int)
	mr, nr        int
	kc, mc, nc    int
	scratch, pack pool[T]
}

// The modes a micro-kernel starts its accumulators in.
const (
	modeZero  = 0 // 0
	modeLoad  = 1 // C
	modeScale = 2 // beta * C
)

// parallelWork is the smallest m*n*k that the product splits across
// goroutines: below it, starting them costs more than they save.
const parallelWork = 1 << 18

// gemm computes C = alpha op(A) op(B) + beta C on cf's micro-kernel, with
// arguments already checked. Every element of C takes the same arithmetic
// whatever the shape, the blocking and the number of goroutines:
// c = beta*c (c = 0 when beta is 0), then c = fma(alpha*a_l, b_l, c) for
// l = 0, ..., k-1 in order, each operation rounded once. Only the work's
// partition across goroutines changes with GOMAXPROCS, never a sum's order.
func gemm[T float](cf *config[T], tA, tB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	if alpha == 0 || k == 0 {
		scale(m, n, beta, c, ldc)
		return
	}
	workers := 1
	if float64(m)*float64(n)*float64(k) >= parallelWork {
		workers = runtime.GOMAXPROCS(0)
	}
	mr, nr := cf.mr, cf.nr
	// Rows per work item: mc, or fewer so that each goroutine gets about
	// four items.
	mc := cf.mc
	if workers > 1 {
		mc = min(mc, max(mr, roundUp(ceilDiv(m, 4*workers), mr)))
	}
	rowItems := ceilDiv(m, mc)
	bbuf := cf.pack.get(cf.kc * roundUp(min(cf.nc, n), nr))
	defer cf.pack.put(bbuf)
	scratch := make([]*[]T, max(workers, 1))
	for w := range scratch {
		scratch[w] = cf.scratch.get(mc*cf.kc + mr*nr)
	}
	defer func() {
		for _, s := range scratch {
			cf.scratch.put(s)
		}
	}()

	for jc := 0; jc < n; jc += cf.nc {
		nb := min(cf.nc, n-jc)
		panels := ceilDiv(nb, nr)
		// Too few row items for the goroutines: split the columns too.
		colItems := 1
		if workers > 1 && rowItems < 2*workers {
			colItems = min(panels, ceilDiv(2*workers, rowItems))
		}
		for pc := 0; pc < k; pc += cf.kc {
			kb := min(cf.kc, k-pc)
			mode := modeLoad
			if pc == 0 {
				switch beta {
				case 0:
					mode = modeZero
				case 1:
					mode = modeLoad
				default:
					mode = modeScale
				}
			}
			const packChunk = 8 // B panels per packing item
			parallel(workers, ceilDiv(panels, packChunk), func(_, i int) {
				q0 := i * packChunk * nr
				q1 := min(nb, q0+packChunk*nr)
				packB((*bbuf)[q0*kb:], tB, b, ldb, pc, kb, jc+q0, q1-q0, nr)
			})
			parallel(workers, rowItems*colItems, func(w, item int) {
				ri, cj := item/colItems, item%colItems
				i0 := ri * mc
				mb := min(mc, m-i0)
				q0, q1 := cj*panels/colItems, (cj+1)*panels/colItems
				buf := *scratch[w]
				abuf, tile := buf[:roundUp(mb, mr)*kb], buf[mc*cf.kc:]
				packA(abuf, tA, a, lda, i0, mb, pc, kb, mr, alpha)
				for q := q0; q < q1; q++ {
					j := jc + q*nr
					cols := min(nr, n-j)
					bp := &(*bbuf)[q*nr*kb]
					for ip := 0; ip < mb; ip += mr {
						rows := min(mr, mb-ip)
						ap := &abuf[ip*kb]
						ci := (i0+ip)*ldc + j
						if rows == mr && cols == nr {
							cf.kern(kb, ap, bp, &c[ci], ldc, beta, mode)
							continue
						}
						// An edge tile runs on a full one in scratch.
						if mode != modeZero {
							for r := range rows {
								copy(tile[r*nr:r*nr+cols], c[ci+r*ldc:])
							}
						}
						cf.kern(kb, ap, bp, &tile[0], nr, beta, mode)
						for r := range rows {
							copy(c[ci+r*ldc:ci+r*ldc+cols], tile[r*nr:])
						}
					}
				}
			})
		}
	}
}

// scale sets C = beta C, as a product with no terms does (C = 0 when beta
// is 0, whatever C held).
func scale[T float](m, n int, beta T, c []T, ldc int) {
	if beta == 1 {
		return
	}
	for i := range m {
		row := c[i*ldc : i*ldc+n]
		if beta == 0 {
			clear(row)
			continue
		}
		for j := range row {
			row[j] *= beta
		}
	}
}

// parallel runs f(w, i) for i = 0, ..., count-1 on up to workers
// goroutines, w numbering the goroutine (each item on one of them).
func parallel(workers, count int, f func(w, i int)) {
	if workers <= 1 || count <= 1 {
		for i := range count {
			f(0, i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range min(workers, count) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= count {
					return
				}
				f(w, i)
			}
		}()
	}
	wg.Wait()
}

// pool keeps buffers of T between products.
type pool[T float] struct{ p sync.Pool }

// get returns a buffer of at least n elements.
func (p *pool[T]) get(n int) *[]T {
	if v, ok := p.p.Get().(*[]T); ok && cap(*v) >= n {
		*v = (*v)[:n]
		return v
	}
	s := make([]T, n)
	return &s
}

func (p *pool[T]) put(v *[]T) { p.p.Put(v) }

func ceilDiv(a, b int) int { return (a + b - 1) / b }

func roundUp(a, b int) int { return ceilDiv(a, b) * b }
