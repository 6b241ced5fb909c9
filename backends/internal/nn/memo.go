package nn

import (
	"bytes"
	"errors"
	"hash/maphash"
	"sync"
	"unsafe"

	"gonum.org/v1/gonum/blas/blas64"
)

// Lazy estimators call a network's Jacobian products many times on the
// same inputs (a cross-validation fold's rows, once per candidate penalty;
// a Krylov solve's rows, twice per step), and every call needs the same
// forward (and for the mlp backward) signals at the fitted parameters, a
// pass that costs as much as a good part of the product. Memo keeps a
// network's values of the most recently used inputs, recognised by content
// (a hash to find them, then an exact comparison with a private copy of
// the input, so a caller that reuses or changes its matrix never gets
// stale values), within MemoBudget bytes. The zero value is empty and
// ready; a model clears it when its parameters change.
//
// Values computes an input's values once however many goroutines ask for
// them at the same time: the lazy estimator's cross-validation asks for a
// fold's predictions at several penalties concurrently
// (framework.PredictShiftsEach), each of which needs the fold's signals,
// and without Values each of them would compute them.
type Memo[V any] struct {
	mu      sync.Mutex
	entries []*memoEntry[V] // least recently used first
	bytes   int
	flights []*memoFlight[V] // inputs whose values are being computed
	gen     uint64           // Clears so far: a flight started before one stores nothing
}

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
	size int // bytes
	// src is where the input last came from (the address of its first
	// value, read and written under the memo's lock): a caller that passes
	// the same matrix again is found by it and an exact comparison, without
	// hashing; an address reused by other data fails the comparison.
	src uintptr
}

// MemoBudget bounds the memory a Memo keeps (512 MiB: at the paper's
// high-dimensional setting an mlp entry is ~1.2 MB; a fold of 10,000 rows
// of a width-50 network ~16 MB; lazy's matrix-free solve needs one entry
// per worker of all the train rows, 43 MB at 6667 rows of a (200, 100)
// network on 100 inputs, 128 MB at 20,000: 64 MiB thrashed with two
// workers there and could not hold the larger one at all).
var MemoBudget = 512 << 20

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
		e.src = src
		return e.v, memoKey{}, true
	}
	var zero V
	return zero, memoKey{hash: hash, src: src}, false
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
	defer m.mu.Unlock()
	if m.gen != gen {
		return
	}
	m.entries = append(m.entries, &memoEntry[V]{hash: k.hash, x: xc, v: v, size: size, src: k.src})
	m.bytes += size
	m.evict()
}

// Charge adds bytes to the size of x's entry, for values derived from it
// later (the mlp's float32 copies of its signals, made on first use),
// evicting the least recently used entries over the budget as put does
// (x's own last: Charge makes it the most recently used). It does nothing
// when x is not in the memo, or when its entry's values are not those the
// bytes were derived from (of says which are): those were evicted, and x
// computed again since, whose values charge their own.
func (m *Memo[V]) Charge(x blas64.General, bytes int, of func(V) bool) {
	hash := hashOf(x)
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.find(hash, x)
	if e == nil || !of(e.v) {
		return
	}
	e.size += bytes
	m.bytes += bytes
	m.evict()
}

// evict drops the least recently used entries while the memo is over its
// budget.
func (m *Memo[V]) evict() {
	drop := 0
	for m.bytes > MemoBudget {
		m.bytes -= m.entries[drop].size
		drop++
	}
	if drop > 0 {
		// A new slice, so the evicted entries are not kept reachable.
		m.entries = append([]*memoEntry[V](nil), m.entries[drop:]...)
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
