package gemm

import (
	"runtime"
	"sync"

	"github.com/lazyvi/lazyvi/internal/parallel"
)

type float interface{ ~float32 | ~float64 }

// config is one micro-kernel with the blocking that feeds it: tiles of C
// are mr x nr, k is taken kc steps at a time (a B panel of kc x nr stays
// in L1), rows mc at a time (a packed A block in L2), columns nc at a time
// (a B block in L3). B is packed only where it is stored transposed, or for
// a last panel narrower than nr: otherwise the kernel reads its rows in
// place, which saves a copy of B per product (a large share of the time
// where op(A) has few rows, as in training's minibatches).
type config[T float] struct {
	kern          func(k int, a, b, c *T, ldb, ldc int, beta T, mode int)
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
// goroutines: below it, starting and joining them costs more than they
// save. The minibatch products of training (a batch of rows by a layer's
// widths) lie below it: vi trains or reduces a model per core, and their
// split only makes the goroutines of concurrent models contend for the
// same cores.
const parallelWork = 1 << 22

// gemm computes C = alpha op(A) op(B) + beta C on cf's micro-kernel, with
// arguments already checked. Every element of C takes the same arithmetic
// whatever the shape, the blocking and the number of goroutines:
// c = beta*c (c = 0 when beta is 0), then c = fma(alpha*a_l, b_l, c) for
// l = 0, ..., k-1 in order, each operation rounded once. Only the work's
// partition across goroutines changes with GOMAXPROCS, never a sum's order.
func gemm[T float](cf *config[T], p *product[T]) {
	m, n, k := p.m, p.n, p.k
	if p.alpha == 0 || k == 0 {
		// C = beta C on the product's part (a's and b's data may be
		// empty where k is 0).
		for i := range m {
			lo, hi := p.part.span(i, 0, n)
			scale(1, hi-lo, p.beta, p.c.data[i*p.c.stride+lo:], p.c.stride)
		}
		return
	}
	j := job[T]{cf: cf, product: *p}
	workers := 1
	if float64(m)*float64(n)*float64(k) >= parallelWork {
		workers = runtime.GOMAXPROCS(0)
	}
	// Rows per work item: mc, or fewer so that each goroutine gets about
	// four items.
	j.mc = cf.mc
	if workers > 1 {
		j.mc = min(j.mc, max(cf.mr, roundUp(ceilDiv(m, 4*workers), cf.mr)))
	}
	j.mc = min(j.mc, roundUp(m, cf.mr))
	rowItems := ceilDiv(m, j.mc)
	bbuf := cf.pack.get(min(cf.kc, k) * roundUp(min(cf.nc, n), cf.nr))
	defer cf.pack.put(bbuf)
	j.bbuf = *bbuf
	scratchLen := j.mc*min(cf.kc, k) + cf.mr*cf.nr
	if workers == 1 {
		buf := cf.scratch.get(scratchLen)
		defer cf.scratch.put(buf)
		for jc := 0; jc < n; jc += cf.nc {
			j.setColumns(jc, 1)
			for pc := 0; pc < k; pc += cf.kc {
				j.setSteps(pc)
				j.packB(0, j.panels)
				for ri := range rowItems {
					j.item(*buf, ri, 0)
				}
			}
		}
		return
	}
	j.runParallel(workers, rowItems, scratchLen)
}

// runParallel runs the job on workers goroutines (j is a copy: only it
// leaves for the heap).
func (j job[T]) runParallel(workers, rowItems, scratchLen int) {
	if deep(j.cf, &j.product, workers) {
		j.runDeep(workers)
		return
	}
	cf := j.cf
	scratch, release := cf.scratch.getEach(workers, scratchLen)
	defer release()
	for jc := 0; jc < j.n; jc += cf.nc {
		// Too few row items for the goroutines: split the columns too.
		panels := ceilDiv(min(cf.nc, j.n-jc), cf.nr)
		colItems := 1
		if rowItems < 2*workers {
			colItems = min(panels, ceilDiv(2*workers, rowItems))
		}
		j.setColumns(jc, colItems)
		for pc := 0; pc < j.k; pc += cf.kc {
			j.setSteps(pc)
			const packChunk = 8 // B panels per packing item
			parallel.For(workers, ceilDiv(panels, packChunk), func(_, i int) {
				j.packB(i*packChunk, min(panels, (i+1)*packChunk))
			})
			parallel.For(workers, rowItems*colItems, func(w, i int) {
				ri := i / colItems
				if j.part == lower {
					// The longest rows first, as upper has them.
					ri = rowItems - 1 - ri
				}
				j.item(*scratch[w], ri, i%colItems)
			})
		}
	}
}

// deep reports whether a parallel product runs its work items through
// all the steps (runDeep) rather than step block by step block: where B
// is read in place (not transposed) and the steps are many for the
// product's rows and columns, the long sums of a product like Phi^T u's
// (a layer's width by the inputs, over thousands of rows), whose step
// blocks are each too little work to split across goroutines and join
// again.
func deep[T float](cf *config[T], p *product[T], workers int) bool {
	if p.b.trans || p.k < 4*cf.kc {
		return false
	}
	// Within a step block, each goroutine's share of the tiles: below
	// about a thousand micro-kernel tiles' worth of steps a block is a
	// few tens of microseconds, the cost of starting and joining them.
	tiles := ceilDiv(p.m, cf.mr) * ceilDiv(p.n, cf.nr)
	return tiles <= 1024*workers
}

// runDeep runs the job as workers goroutines' items, each a block of rows
// (and, where the rows are fewer than the goroutines, of panels) through
// every step block: the item packs its own A and the last, partial B
// panel for each step block, so that no goroutine waits for another
// between them. Each element of C takes the same arithmetic as in the
// step-by-step order.
func (j job[T]) runDeep(workers int) {
	cf := j.cf
	j.mc = min(cf.mc, roundUp(ceilDiv(j.m, workers), cf.mr))
	rowItems := ceilDiv(j.m, j.mc)
	scratchLen := j.mc*min(cf.kc, j.k) + cf.mr*cf.nr
	scratch, release := cf.scratch.getEach(workers, scratchLen)
	defer release()
	bbufs, releaseB := cf.pack.getEach(workers, min(cf.kc, j.k)*roundUp(min(cf.nc, j.n), cf.nr))
	defer releaseB()
	for jc := 0; jc < j.n; jc += cf.nc {
		panels := ceilDiv(min(cf.nc, j.n-jc), cf.nr)
		colItems := 1
		if rowItems < workers {
			colItems = min(panels, ceilDiv(workers, rowItems))
		}
		j.setColumns(jc, colItems)
		parallel.For(workers, rowItems*colItems, func(w, i int) {
			jw := j
			jw.bbuf = *bbufs[w]
			ri, cj := i/colItems, i%colItems
			if j.part == lower {
				ri = rowItems - 1 - ri
			}
			q1 := (cj + 1) * jw.panels / jw.colItems
			for pc := 0; pc < j.k; pc += cf.kc {
				jw.setSteps(pc)
				if q1 == jw.panels {
					jw.packB(q1-1, q1)
				}
				jw.item(*scratch[w], ri, cj)
			}
		})
	}
}

// matrix is an operand of a product as stored: row-major with rows stride
// elements apart, transposed where trans is set (op(X)[i][j] is
// data[j*stride+i] then, data[i*stride+j] otherwise). C is never
// transposed.
type matrix[T float] struct {
	trans  bool
	data   []T
	stride int
}

// product is C = alpha op(A) op(B) + beta C with op(A) m x k, op(B) k x n
// and C m x n, on all of C or, where part says, on one triangle of it.
type product[T float] struct {
	m, n, k     int
	alpha, beta T
	a, b, c     matrix[T]
	part        part
}

// part is the part of C that a product computes, leaving the rest as it
// is.
type part int

const (
	whole part = iota // all of C
	upper             // c_ij with j >= i
	lower             // c_ij with j <= i
)

// span returns the columns col+lo..col+hi-1 of row i that part holds
// among col..col+cols-1 (lo == hi where none).
func (pt part) span(i, col, cols int) (lo, hi int) {
	switch pt {
	case upper:
		return min(max(i-col, 0), cols), cols
	case lower:
		return 0, min(max(i-col+1, 0), cols)
	}
	return 0, cols
}

// job is one product in progress: its arguments, its blocking and the
// column and step block (jc, pc) being computed.
type job[T float] struct {
	cf *config[T]
	product[T]
	mc             int // rows per work item
	bbuf           []T // the packed B block
	jc, nb, panels int // column block: first column, columns, panels
	colItems       int // work items across the column block
	pc, kb, mode   int // step block: first step, steps, kernel mode
}

func (j *job[T]) setColumns(jc, colItems int) {
	j.jc, j.nb = jc, min(j.cf.nc, j.n-jc)
	j.panels, j.colItems = ceilDiv(j.nb, j.cf.nr), colItems
}

func (j *job[T]) setSteps(pc int) {
	j.pc, j.kb = pc, min(j.cf.kc, j.k-pc)
	j.mode = modeLoad
	if pc == 0 {
		switch j.beta {
		case 0:
			j.mode = modeZero
		case 1:
			j.mode = modeLoad
		default:
			j.mode = modeScale
		}
	}
}

// packB packs panels q0..q1-1 of the column block's B: all of them where
// B is stored transposed, only a last panel narrower than nr where not.
func (j *job[T]) packB(q0, q1 int) {
	nr := j.cf.nr
	if !j.b.trans {
		if q1 == j.panels && j.nb%nr != 0 {
			q := j.panels - 1
			packBPanel(j.bbuf[q*nr*j.kb:(q+1)*nr*j.kb], j.b, j.pc, j.kb, j.jc+q*nr, j.nb-q*nr, nr)
		}
		return
	}
	c0, c1 := q0*nr, min(j.nb, q1*nr)
	packB(j.bbuf[c0*j.kb:], j.b, j.pc, j.kb, j.jc+c0, c1-c0, nr)
}

// bPanel returns panel q of the column block's B and the distance between
// its steps.
func (j *job[T]) bPanel(q int) (*T, int) {
	nr := j.cf.nr
	if !j.b.trans && (q+1)*nr <= j.nb {
		return &j.b.data[j.pc*j.b.stride+j.jc+q*nr], j.b.stride
	}
	return &j.bbuf[q*nr*j.kb], nr
}

// item computes the work item of row block ri and column part cj: it packs
// that block's A into buf and runs the micro-kernel over its tiles, B
// panel by B panel, skipping those outside the product's part.
func (j *job[T]) item(buf []T, ri, cj int) {
	cf, kb, mode, c, ldc := j.cf, j.kb, j.mode, j.c.data, j.c.stride
	mr, nr := cf.mr, cf.nr
	i0 := ri * j.mc
	mb := min(j.mc, j.m-i0)
	q0, q1 := cj*j.panels/j.colItems, (cj+1)*j.panels/j.colItems
	abuf, tile := buf[:roundUp(mb, mr)*kb], buf[len(buf)-mr*nr:]
	j.packA(abuf, i0, mb)
	for q := q0; q < q1; q++ {
		col := j.jc + q*nr
		cols := min(nr, j.n-col)
		bp, ldb := j.bPanel(q)
		for ip := 0; ip < mb; ip += mr {
			rows := min(mr, mb-ip)
			ap := &abuf[ip*kb]
			row := i0 + ip
			ci := row*ldc + col
			// The part's columns in the tile's first and last rows: a
			// part's spans change monotonically down the rows.
			lo0, hi0 := j.part.span(row, col, cols)
			lo1, hi1 := j.part.span(row+rows-1, col, cols)
			if lo0 == hi0 && lo1 == hi1 {
				continue
			}
			if rows == mr && cols == nr && lo0 == 0 && lo1 == 0 && hi0 == nr && hi1 == nr {
				cf.kern(kb, ap, bp, &c[ci], ldb, ldc, j.beta, mode)
				continue
			}
			// An edge tile, or one across a triangle's diagonal, runs on a
			// full one in scratch; each element's arithmetic is its own, so
			// what the scratch holds outside the part changes nothing.
			if mode != modeZero {
				for r := range rows {
					lo, hi := j.part.span(row+r, col, cols)
					copy(tile[r*nr+lo:r*nr+hi], c[ci+r*ldc+lo:])
				}
			}
			cf.kern(kb, ap, bp, &tile[0], ldb, nr, j.beta, mode)
			for r := range rows {
				lo, hi := j.part.span(row+r, col, cols)
				copy(c[ci+r*ldc+lo:ci+r*ldc+hi], tile[r*nr+lo:])
			}
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

// pool keeps buffers of T between products.
type pool[T float] struct{ p sync.Pool }

// getEach returns a buffer of at least n elements for each of workers
// goroutines, and the function that puts them all back.
func (p *pool[T]) getEach(workers, n int) ([]*[]T, func()) {
	bufs := make([]*[]T, workers)
	for w := range bufs {
		bufs[w] = p.get(n)
	}
	return bufs, func() {
		for _, b := range bufs {
			p.put(b)
		}
	}
}

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
