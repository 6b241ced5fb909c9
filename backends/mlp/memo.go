package mlp

import (
	"bytes"
	"hash/maphash"
	"sync"
	"unsafe"

	"gonum.org/v1/gonum/blas/blas64"
)

// Lazy estimators call JacobianTVec many times on the same inputs (a
// cross-validation fold's rows, once per candidate penalty), and every call
// needs the same forward and backward signals at the fitted parameters, a
// forward pass that costs as much as the product itself. signalMemo keeps
// the signals of the most recently used inputs, recognised by content (a
// hash to find them, then an exact comparison with a private copy of the
// input, so a caller that reuses or changes its matrix never gets stale
// signals), within a byte budget.
type signalMemo struct {
	mu      sync.Mutex
	entries []*memoEntry // least recently used first
	bytes   int
}

// memoEntry is one input and its signals; they are never written after
// they are stored, so callers may read them concurrently.
type memoEntry struct {
	hash   uint64
	x      blas64.General // private copy, also acts.acts[0]
	acts   *activations
	deltas []blas64.General
	size   int // bytes
	// src is where the input last came from (the address of its first
	// value, read and written under the memo's lock): a caller that passes
	// the same matrix again is found by it and an exact comparison, without
	// hashing; an address reused by other data fails the comparison.
	src uintptr
}

// memoBudget bounds the memory the memo keeps per model (512 MiB: at the
// paper's high-dimensional setting an entry is ~1.2 MB; a fold of 10,000
// rows of a width-50 network ~16 MB; lazy's matrix-free solve needs one
// entry per worker of all the train rows, 43 MB at 6667 rows of a (200,
// 100) network on 100 inputs, 128 MB at 20,000: 64 MiB thrashed with two
// workers there and could not hold the larger one at all).
var memoBudget = 512 << 20

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

// get returns the stored signals of x, or nil; the hash of x, when it had
// to be computed, is returned too (0 otherwise).
func (m *signalMemo) get(x blas64.General) (*memoEntry, uint64) {
	src := addrOf(x)
	m.mu.Lock()
	for i, e := range m.entries {
		if e.src == src && sameInput(e.x, x) {
			m.touch(i)
			m.mu.Unlock()
			return e, 0
		}
	}
	m.mu.Unlock()
	hash := hashOf(x) // outside the lock: other lookups need not wait
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, e := range m.entries {
		if e.hash == hash && sameInput(e.x, x) {
			e.src = src
			m.touch(i)
			return e, hash
		}
	}
	return nil, hash
}

// touch makes entry i the most recently used.
func (m *signalMemo) touch(i int) {
	e := m.entries[i]
	m.entries = append(append(m.entries[:i:i], m.entries[i+1:]...), e)
}

func addrOf(x blas64.General) uintptr {
	if len(x.Data) == 0 {
		return 0
	}
	return uintptr(unsafe.Pointer(&x.Data[0]))
}

// put stores e, evicting the least recently used entries over the budget.
func (m *signalMemo) put(e *memoEntry) {
	if e.size > memoBudget {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.entries = append(m.entries, e)
	m.bytes += e.size
	drop := 0
	for m.bytes > memoBudget {
		m.bytes -= m.entries[drop].size
		drop++
	}
	if drop > 0 {
		// A new slice, so the evicted entries are not kept reachable.
		m.entries = append([]*memoEntry(nil), m.entries[drop:]...)
	}
}

// clear forgets everything (the parameters changed).
func (m *signalMemo) clear() {
	m.mu.Lock()
	m.entries, m.bytes = nil, 0
	m.mu.Unlock()
}

// signalsOf returns signals(x) from the memo, computing and storing them
// when they are not there. The result is shared: callers must not write it.
func (md *Model) signalsOf(x blas64.General) (*activations, []blas64.General) {
	e, h := md.memo.get(x)
	if e != nil {
		return e.acts, e.deltas
	}
	xc := blas64.General{Rows: x.Rows, Cols: x.Cols, Stride: x.Cols, Data: make([]float64, x.Rows*x.Cols)}
	for i := 0; i < x.Rows; i++ {
		copy(xc.Data[i*x.Cols:(i+1)*x.Cols], x.Data[i*x.Stride:i*x.Stride+x.Cols])
	}
	acts, deltas := md.signals(xc)
	size := len(xc.Data) + len(acts.out) + len(acts.prob)
	for l := range acts.acts {
		size += len(acts.acts[l].Data)
	}
	for _, d := range deltas {
		size += len(d.Data)
	}
	md.memo.put(&memoEntry{hash: h, x: xc, acts: acts, deltas: deltas, size: 8 * size, src: addrOf(x)})
	return acts, deltas
}
