package nn

import (
	"bytes"
	"errors"
	"hash/maphash"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// Lazy estimators call a network's Jacobian products many times on the
// same inputs (a cross-validation fold's rows, once per candidate penalty;
// a Krylov solve's rows, twice per step), and every call needs the same
// forward (and for the mlp backward) signals at the fitted parameters, a
// pass that costs as much as a good part of the product. Memo keeps a
// network's values of the most recently used inputs, recognised by content
// (a hash to find them, then an exact comparison with a private copy of
// the input, so a caller that reuses or changes its matrix never gets
// stale values), within MemoBudget bytes, which all the Memos of a process
// share: a backend process serving several models (the folds of a
// cross-fit, each a network with its Memo) keeps the most recently used
// entries of all of them, the inputs its workers are on now, not a budget's
// worth of stale inputs per model; an input unused for memoMaxAge uses of
// any entry is dropped within the budget too. The zero value is empty and ready; a
// model clears it when its parameters change.
//
// Values computes an input's values once however many goroutines ask for
// them at the same time: the lazy estimator's cross-validation asks for a
// fold's predictions at several penalties concurrently
// (jacobian.PredictShiftsEach), each of which needs the fold's signals,
// and without Values each of them would compute them.
type Memo[V any] struct {
	mu      sync.Mutex
	entries []*memoEntry[V] // least recently used first
	bytes   int
	flights []*memoFlight[V] // inputs whose values are being computed
	gen     uint64           // Clears so far: a flight started before one stores nothing
	// held are the inputs whose callers said they keep their values until
	// their Forget (Hold), by address: their entries are found by address
	// and shape, without comparing values.
	held map[uintptr]shape
}

// shape is an input's dimensions and stride.
type shape struct{ rows, cols, stride int }

func shapeOf(x blas64.General) shape { return shape{x.Rows, x.Cols, x.Stride} }

// memoFlight is an input whose values a call of Values is computing; the
// calls that ask for the same input meanwhile wait for done and take v,
// or compute the values themselves when err is set (the computation
// failed, say with its caller's context).
type memoFlight[V any] struct {
	gen  uint64 // the memo's gen when the flight started
	hash uint64
	x    blas64.General // private copy
	done chan struct{}
	v    V
	err  error
}

// memoEntry is one input and its values; they are never written after
// they are stored, so callers may read them concurrently.
type memoEntry[V any] struct {
	hash uint64
	x    blas64.General // private copy
	v    V
	size int    // bytes
	used uint64 // memoClock when last stored or found
	// src is where the input last came from (the address of its first
	// value, read and written under the memo's lock): a caller that passes
	// the same matrix again is found by it and an exact comparison, without
	// hashing; an address reused by other data fails the comparison.
	src uintptr
	// from is the shape (rows, columns, stride) of the input at src.
	from shape
}

// MemoBudget bounds the memory all of a process's Memos keep together (1
// GiB). Lazy's matrix-free solve needs one entry per worker of all the
// train rows, held while that worker's reduction runs and forgotten when it
// ends: 43 MB at 6667 rows of a (200, 100) network on 100 inputs, 168 MB
// at 20,000 rows (its float64 and float32 signals), 490 MB at 66,667 rows
// of a (512, 256) network (an mlp's lean entry: float32 signals only).
// Two workers' entries at the largest size fit, so that they do not evict
// each other and recompute their signals at every product. An mlp entry at the paper's
// high-dimensional setting is about 1.2 MB. The workers reduce one feature
// at a time each, whichever fold's model it is, so that what they use at
// once does not grow with the number of models a backend serves.
var MemoBudget = 1 << 30

var memoSeed = maphash.MakeSeed()

// hashOf hashes x's dimensions and values (their bit patterns).
func hashOf(x blas64.General) uint64 {
	var h maphash.Hash
	h.SetSeed(memoSeed)
	var dims [16]byte
	*(*[2]int64)(unsafe.Pointer(&dims)) = [2]int64{int64(x.Rows), int64(x.Cols)}
	h.Write(dims[:])
	for i := 0; i < x.Rows; i++ {
		h.Write(floatBytes(x.Data[i*x.Stride : i*x.Stride+x.Cols]))
	}
	return h.Sum64()
}

func floatBytes(v []float64) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), len(v)*8)
}

func sameInput(a, b blas64.General) bool {
	if a.Rows != b.Rows || a.Cols != b.Cols {
		return false
	}
	for i := 0; i < a.Rows; i++ {
		if !bytes.Equal(floatBytes(a.Data[i*a.Stride:i*a.Stride+a.Cols]), floatBytes(b.Data[i*b.Stride:i*b.Stride+b.Cols])) {
			return false
		}
	}
	return true
}

func addrOf(x blas64.General) uintptr {
	if len(x.Data) == 0 {
		return 0
	}
	return uintptr(unsafe.Pointer(&x.Data[0]))
}

// memoKey identifies an input that was not in the memo: put stores its
// values under it.
type memoKey struct {
	hash uint64
	src  uintptr
	from shape
}

// Values returns the values of x: the stored ones, those that another call
// is computing (waiting for them), or else compute's on a private copy of
// x (xc, which the memo keeps), stored with their size in bytes. A
// compute that fails stores nothing and returns its error; a call that
// was waiting for it then computes the values itself.
func (m *Memo[V]) Values(x blas64.General, compute func(xc blas64.General) (v V, size int, err error)) (V, error) {
	for {
		v, key, ok := m.get(x)
		if ok {
			return v, nil
		}
		m.mu.Lock()
		if e := m.find(key.hash, x); e != nil {
			m.mu.Unlock() // stored since get looked
			return e.v, nil
		}
		var f *memoFlight[V]
		for _, g := range m.flights {
			if g.hash == key.hash && sameInput(g.x, x) {
				f = g
				break
			}
		}
		if f != nil {
			m.mu.Unlock()
			if testHookWait != nil {
				testHookWait()
			}
			<-f.done
			if f.err == nil {
				return f.v, nil
			}
			continue
		}
		f = &memoFlight[V]{gen: m.gen, hash: key.hash, x: CopyInput(x), done: make(chan struct{})}
		m.flights = append(m.flights, f)
		m.mu.Unlock()
		return m.fly(key, f, compute)
	}
}

// fly runs f's computation, stores its values and releases its waiters,
// whatever happens (a panic in compute is released as an error and goes
// on up).
func (m *Memo[V]) fly(key memoKey, f *memoFlight[V], compute func(xc blas64.General) (V, int, error)) (V, error) {
	f.err = errAbandoned
	defer func() {
		m.mu.Lock()
		for i, g := range m.flights {
			if g == f {
				m.flights = append(m.flights[:i:i], m.flights[i+1:]...)
				break
			}
		}
		m.mu.Unlock()
		close(f.done)
	}()
	v, size, err := compute(f.x)
	if err != nil {
		f.err = err
		var zero V
		return zero, err
	}
	m.put(key, f.x, v, size, f.gen)
	f.v, f.err = v, nil
	return v, nil
}

// errAbandoned is a flight's error while its computation runs: what its
// waiters see when compute panics.
var errAbandoned = errors.New("nn: memo: the computation was abandoned")

// testHookWait, when set (by tests), is called by a call of Values just
// before it waits for another's computation.
var testHookWait func()

// get returns the stored values of x and true, or the key to put them
// under and false.
func (m *Memo[V]) get(x blas64.General) (V, memoKey, bool) {
	src := addrOf(x)
	m.mu.Lock()
	if i := m.heldEntry(x); i >= 0 {
		e := m.entries[i]
		m.touch(i)
		m.mu.Unlock()
		return e.v, memoKey{}, true
	}
	for i, e := range m.entries {
		if e.src == src && sameInput(e.x, x) {
			m.touch(i)
			m.mu.Unlock()
			return e.v, memoKey{}, true
		}
	}
	m.mu.Unlock()
	hash := hashOf(x) // outside the lock: other lookups need not wait
	m.mu.Lock()
	defer m.mu.Unlock()
	if e := m.find(hash, x); e != nil {
		e.src, e.from = src, shapeOf(x)
		return e.v, memoKey{}, true
	}
	var zero V
	return zero, memoKey{hash: hash, src: src, from: shapeOf(x)}, false
}

// heldEntry returns the index of x's entry where x is held (Hold) with
// its shape, found by its address and shape, or -1; m.mu must be held. An
// entry made from an input at a held input's address and of its shape has
// that input's values: Hold took the address from any entry whose values
// differ, and the input keeps its values while held.
func (m *Memo[V]) heldEntry(x blas64.General) int {
	src := addrOf(x)
	if sh, ok := m.held[src]; !ok || sh != shapeOf(x) {
		return -1
	}
	for i, e := range m.entries {
		if e.src == src && e.from == shapeOf(x) {
			return i
		}
	}
	return -1
}

// Hold records the caller's word that x keeps its values until the
// caller's Forget of it: until then the lookups of x find its entry by
// its address and shape, without comparing x's values with the entry's
// copy (at thousands of rows, a tenth of a network's Jacobian product).
// x's values must be in the heap, where Go never moves them (a goroutine's
// stack moves when it grows). An entry at x's address whose values are
// not x's (of an input gone whose memory x now occupies) loses the
// address, and is found by its values alone.
func (m *Memo[V]) Hold(x blas64.General) {
	if x.Rows == 0 || x.Cols == 0 {
		return
	}
	src := addrOf(x)
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range m.entries {
		if e.src == src && !sameInput(e.x, x) {
			e.src = 0
		}
	}
	if m.held == nil {
		m.held = map[uintptr]shape{}
	}
	m.held[src] = shapeOf(x)
}

// HoldAll is Hold of each of xs (a framework.Holder's inputs) that has
// raw storage; another is read into a copy at each call, which no one
// holds.
func (m *Memo[V]) HoldAll(xs []mat.Matrix) {
	for _, x := range xs {
		if rm, ok := x.(mat.RawMatrixer); ok && x != nil {
			m.Hold(rm.RawMatrix())
		}
	}
}

// find returns the entry of x (of the given hash), made the most recently
// used, or nil; m.mu must be held.
func (m *Memo[V]) find(hash uint64, x blas64.General) *memoEntry[V] {
	for i, e := range m.entries {
		if e.hash == hash && sameInput(e.x, x) {
			m.touch(i)
			return e
		}
	}
	return nil
}

// touch makes entry i the most recently used.
func (m *Memo[V]) touch(i int) {
	e := m.entries[i]
	e.used = memoClock.Add(1)
	m.entries = append(append(m.entries[:i:i], m.entries[i+1:]...), e)
}

// put stores v, the values of xc (a private copy of the input get was
// given, which the memo keeps and compares with), of size bytes (xc's
// included), evicting the least recently used entries over the budget; an
// entry larger than the budget is not stored, nor are values computed
// before a Clear (the memo's gen was gen then: they may be of the old
// parameters).
func (m *Memo[V]) put(k memoKey, xc blas64.General, v V, size int, gen uint64) {
	if size > MemoBudget {
		return
	}
	m.mu.Lock()
	if m.gen != gen {
		m.mu.Unlock()
		return
	}
	m.entries = append(m.entries, &memoEntry[V]{hash: k.hash, x: xc, v: v, size: size, src: k.src, from: k.from, used: memoClock.Add(1)})
	m.bytes += size
	m.mu.Unlock()
	pool.add(m)
}

// Charge adds bytes to the size of x's entry, for values derived from it
// later (the mlp's float32 copies of its signals, made on first use),
// evicting the least recently used entries over the budget as put does
// (x's own last: Charge makes it the most recently used). It does nothing
// when x is not in the memo, or when its entry's values are not those the
// bytes were derived from (of says which are): those were evicted, and x
// computed again since, whose values charge their own.
func (m *Memo[V]) Charge(x blas64.General, bytes int, of func(V) bool) {
	m.mu.Lock()
	var e *memoEntry[V]
	if i := m.heldEntry(x); i >= 0 {
		e = m.entries[i]
		m.touch(i)
	} else {
		m.mu.Unlock()
		hash := hashOf(x)
		m.mu.Lock()
		e = m.find(hash, x)
	}
	if e == nil || !of(e.v) {
		m.mu.Unlock()
		return
	}
	e.size += bytes
	m.bytes += bytes
	m.mu.Unlock()
	pool.add(m)
}

// usage returns the memo's bytes and when its least recently used entry
// was last used, and false when it has no entries.
func (m *Memo[V]) usage() (int, uint64, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.entries) == 0 {
		return 0, 0, false
	}
	return m.bytes, m.entries[0].used, true
}

// dropOldest drops the memo's least recently used entry and returns its
// bytes.
func (m *Memo[V]) dropOldest() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.entries) == 0 {
		return 0
	}
	size := m.entries[0].size
	m.bytes -= size
	// A new slice, so the evicted entry is not kept reachable.
	m.entries = append([]*memoEntry[V](nil), m.entries[1:]...)
	return size
}

// Forget drops the entries of x and of the matrices that share its storage
// (its views, as mat.Dense.Slice makes them: a cross-validation's folds of
// a reduction's rows), found by where their inputs came from, and x's
// entry by its values wherever it came from: its caller is done with them
// (framework.Forgetter), so their values go now instead of when the budget
// or memoMaxAge needs the room. Values that callers hold stay theirs; a
// later Values on the same input computes them again, the same values. A
// computation in flight still stores its values, to be dropped like any
// entry. (An entry of an input long gone whose memory x now occupies is
// dropped too: no one can pass that input again, only its values, which
// are computed again.)
func (m *Memo[V]) Forget(x blas64.General) {
	if x.Rows == 0 || x.Cols == 0 {
		return
	}
	lo := addrOf(x)
	hi := lo + uintptr(8*((x.Rows-1)*x.Stride+x.Cols))
	m.mu.Lock()
	delete(m.held, lo)
	self := false
	m.entries = slices.DeleteFunc(m.entries, func(e *memoEntry[V]) bool {
		if e.src < lo || e.src >= hi {
			return false
		}
		self = self || (e.src == lo && sameInput(e.x, x))
		m.bytes -= e.size
		return true
	})
	empty := len(m.entries) == 0
	m.mu.Unlock()
	if self || empty {
		return
	}
	hash := hashOf(x) // outside the lock, as get hashes
	m.mu.Lock()
	if i := slices.IndexFunc(m.entries, func(e *memoEntry[V]) bool { return e.hash == hash && sameInput(e.x, x) }); i >= 0 {
		m.bytes -= m.entries[i].size
		m.entries = slices.Delete(m.entries, i, i+1)
	}
	m.mu.Unlock()
}

// ForgetAll is Forget of each of xs (a framework.Forgetter's inputs): a
// matrix without raw storage is read as Input reads it.
func (m *Memo[V]) ForgetAll(xs []mat.Matrix) {
	for _, x := range xs {
		if x == nil {
			continue
		}
		if rm, ok := x.(mat.RawMatrixer); ok {
			m.Forget(rm.RawMatrix())
		} else {
			m.Forget(mat.DenseCopyOf(x).RawMatrix())
		}
	}
}

// Clear forgets everything (the parameters changed). A computation that
// Values started before it stores nothing, and later calls do not wait
// for it; the calls already waiting for it still get its values.
func (m *Memo[V]) Clear() {
	m.mu.Lock()
	m.entries, m.bytes, m.flights = nil, 0, nil
	m.gen++
	m.mu.Unlock()
	pool.remove(m)
}

// memoClock orders the uses of all Memos' entries: the pool evicts the
// entry whose last use is the earliest.
var memoClock atomic.Uint64

// pooled is a Memo as the pool sees it, whatever its values' type.
type pooled interface {
	usage() (bytes int, oldest uint64, ok bool)
	dropOldest() int
}

// memoPool is the set of Memos that hold entries, which share MemoBudget.
// A Memo leaves it when it has no entries left (the pool evicted them all,
// or it was cleared), so that a model no longer used is not kept
// reachable by it.
type memoPool struct {
	mu    sync.Mutex
	memos map[pooled]struct{}
}

var pool memoPool

// memoMaxAge is how many uses of any Memo's entries (memoClock's ticks)
// an entry may go unused before the pool drops it whatever the budget: an
// input that many uses behind is one the workers have left (a feature's
// rows, once its reduction is done), and keeping it until the budget is
// full only makes the process's heap, and the memory it must fault in,
// grow. An input in use is used far more often: a Krylov solve's rows
// twice a step, a fold's rows once per candidate penalty.
const memoMaxAge = 256

// add enters m, which has just stored or grown an entry, and evicts the
// least recently used entries of all Memos while together they hold more
// than MemoBudget or the least recently used is more than memoMaxAge uses
// old; m's lock must not be held.
func (p *memoPool) add(m pooled) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.memos == nil {
		p.memos = map[pooled]struct{}{}
	}
	p.memos[m] = struct{}{}
	now := memoClock.Load()
	for {
		total := 0
		var victim pooled
		var when uint64
		for q := range p.memos {
			b, t, ok := q.usage()
			if !ok {
				delete(p.memos, q)
				continue
			}
			total += b
			if victim == nil || t < when {
				victim, when = q, t
			}
		}
		if victim == nil || (total <= MemoBudget && now-when <= memoMaxAge) {
			return
		}
		victim.dropOldest()
	}
}

// remove takes a cleared Memo out of the pool.
func (p *memoPool) remove(m pooled) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.memos, m)
}

// Len reports the entries kept.
func (m *Memo[V]) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.entries)
}

// Bytes reports the bytes of the entries kept.
func (m *Memo[V]) Bytes() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.bytes
}

// CopyInput returns a private, contiguous copy of x.
func CopyInput(x blas64.General) blas64.General {
	xc := blas64.General{Rows: x.Rows, Cols: x.Cols, Stride: x.Cols, Data: make([]float64, x.Rows*x.Cols)}
	for i := 0; i < x.Rows; i++ {
		copy(xc.Data[i*x.Cols:(i+1)*x.Cols], x.Data[i*x.Stride:i*x.Stride+x.Cols])
	}
	return xc
}
