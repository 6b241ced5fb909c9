package backendplugin

import (
	"container/list"
	"encoding/binary"
	"hash/maphash"
	"slices"
	"sync"
	"unsafe"

	"gonum.org/v1/gonum/mat"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/lazyvi/lazyvi/proto/lazyvi/backend/v2"
)

// Matrix handles (see the Matrix message in
// proto/lazyvi/backend/v2/backend.proto): the client names a request matrix
// it may send again by a handle, sends its data once under that handle, then
// the handle alone, and releases the handle when it stops keeping the
// matrix; the server keeps what it is sent under a handle until then.

// defaultKeptBytes bounds the bytes of the matrices the client keeps
// handles for (and so the server's kept matrices): lazy's working set is a
// few matrices per feature in flight, a fold's rows each, and at scale
// each solve's train rows (53 MB at 66,667 rows of 100 features; two
// workers' and the baseline's overlap). A matrix whose handle is dropped
// is sent again in full, and a plugin that keeps what it computes on a
// matrix (its signals) by the kept matrix loses that too.
const defaultKeptBytes = 256 << 20

// minKeptElems: smaller matrices are cheaper to send than to hash.
const minKeptElems = 4096

// maxHandleAge is how many pins of any handle a handle may go unpinned
// before the client drops it whatever the budget: lazy's dense path sends
// each feature's rows, pins them a few dozen times while it reduces that
// feature and never again, and keeping them until the budget is full only
// makes both processes' heaps, and the memory they fault in, grow. A
// matrix in use is pinned far more often (a Krylov solve's rows twice a
// step); one dropped too early is only sent again.
const maxHandleAge = 512

// keptMatrices is the server's store of matrices by handle, safe for
// concurrent RPCs. The stored matrices alias the data of the requests that
// brought them; backends must not modify their inputs (in process they get
// the caller's matrices, which the estimators reuse too).
type keptMatrices struct {
	mu sync.RWMutex
	m  map[uint64]*mat.Dense
}

func newKeptMatrices() *keptMatrices { return &keptMatrices{m: make(map[uint64]*mat.Dense)} }

// resolve unpacks the request matrix m, called name in errors: a plain
// matrix as fromPB does; one with a handle and data is also kept under the
// handle; a reference is looked up.
func (k *keptMatrices) resolve(name string, m *pb.Matrix) (*mat.Dense, error) {
	if m == nil || m.Handle == 0 || m.Rows <= 0 || m.Cols <= 0 {
		return matrixArg(name, m)
	}
	if len(m.Data) == 0 { // a reference
		k.mu.RLock()
		d, ok := k.m[m.Handle]
		k.mu.RUnlock()
		if !ok {
			return nil, status.Errorf(codes.InvalidArgument, "%s: no matrix kept under handle %d (never sent, or released)", name, m.Handle)
		}
		if r, c := d.Dims(); int64(r) != m.Rows || int64(c) != m.Cols {
			return nil, status.Errorf(codes.InvalidArgument, "%s: the matrix under handle %d is %d x %d, the reference says %d x %d",
				name, m.Handle, r, c, m.Rows, m.Cols)
		}
		return d, nil
	}
	d, err := matrixArg(name, m)
	if err != nil {
		return nil, err
	}
	k.mu.Lock()
	k.m[m.Handle] = d
	k.mu.Unlock()
	return d, nil
}

// release drops the matrices kept under handles and returns them.
func (k *keptMatrices) release(handles []uint64) []mat.Matrix {
	var out []mat.Matrix
	k.mu.Lock()
	for _, h := range handles {
		if d, ok := k.m[h]; ok {
			out = append(out, d)
			delete(k.m, h)
		}
	}
	k.mu.Unlock()
	return out
}

func (k *keptMatrices) len() int {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return len(k.m)
}

// The client's side.

// hashSeeds are the two fixed per-process seeds of the content keys.
var hashSeeds = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}

// keyHeader is the length of a key's verbatim part: rows, cols and row
// layout.
const keyHeader = 24

// matrixKey is the client's content key of a packed request matrix: its
// rows, cols and row layout verbatim (the same values in another shape or
// layout are another matrix to the server, which computes on the layout it
// keeps), then two 64-bit hash/maphash hashes, under the two seeds, of its
// values' bytes. Two different matrices of one shape and layout share a
// key only if both hashes collide under independent random seeds. The
// values are hashed as one string (maphash.Comparable), which hands them to
// the runtime's memhash in one call instead of maphash.Hash's 128-byte
// chunks.
func matrixKey(m *pb.Matrix) string {
	var key [keyHeader + 16]byte
	binary.LittleEndian.PutUint64(key[:8], uint64(m.Rows))
	binary.LittleEndian.PutUint64(key[8:], uint64(m.Cols))
	if l := m.Layout; l != nil {
		binary.LittleEndian.PutUint32(key[16:], 1+l.Phase)
		binary.LittleEndian.PutUint32(key[20:], l.Skew)
	}
	var raw string
	if len(m.Data) > 0 {
		raw = unsafe.String(unsafe.SliceData(m.Data), len(m.Data))
	}
	for i, seed := range hashSeeds {
		binary.LittleEndian.PutUint64(key[keyHeader+8*i:], maphash.Comparable(seed, raw))
	}
	return string(key[:])
}

// handle is the client's record of one kept matrix.
type handle struct {
	id     uint64
	key    string
	size   int64
	last   uint64 // the table's pins when last pinned
	stored bool   // a call that carried the data under id has succeeded
	pins   int    // calls in flight using id
	gone   bool   // dropped from the table; released once unpinned
	elem   *list.Element
	// src is where the matrix last pinned under h lies in the caller's
	// memory, so that Forget of a matrix finds the handles of its views.
	src span
}

// span is the addresses a matrix's values lie within; a view of it
// (mat.Dense.Slice) lies within its span.
type span struct{ lo, hi uintptr }

// spanOf is x's span; the zero span for a matrix without raw storage.
func spanOf(x mat.Matrix) span {
	rm, ok := x.(mat.RawMatrixer)
	if !ok {
		return span{}
	}
	g := rm.RawMatrix()
	if g.Rows == 0 || g.Cols == 0 || len(g.Data) == 0 {
		return span{}
	}
	lo := uintptr(unsafe.Pointer(&g.Data[0]))
	return span{lo, lo + uintptr(8*((g.Rows-1)*g.Stride+g.Cols))}
}

// within reports whether s lies within t (s not empty).
func (s span) within(t span) bool { return s.lo != 0 && s.lo >= t.lo && s.hi <= t.hi }

// handleTable is the client's handles by content key, least recently used
// first out, bounded by the bytes of their matrices. A handle in use by a
// call in flight is released only when that call is done.
type handleTable struct {
	mu      sync.Mutex
	budget  int64
	used    int64
	next    uint64
	byKey   map[string]*handle
	order   *list.List // of *handle, most recent first
	release []uint64   // handles to release with the next Release
	pins    uint64     // pins so far, the clock of maxHandleAge
	// pending: the bytes of the matrices under release; they are released
	// once they reach a quarter of the budget, so that a caller sending
	// new matrices all the time (each call's rows new) pays one Release
	// per few calls, not one per call.
	pending int64
}

func newHandleTable(budget int64) *handleTable {
	return &handleTable{budget: budget, byKey: make(map[string]*handle), order: list.New()}
}

// pin returns the handle of the matrix with content key and size bytes, a
// new one if there is none (nil when the matrix alone exceeds the
// budget), marked in use until unpin. Making a new handle drops the
// least recently pinned ones past the budget, and those pinned last more
// than maxHandleAge pins ago.
func (t *handleTable) pin(key string, size int64) *handle {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.pins++
	if h, ok := t.byKey[key]; ok {
		h.pins++
		h.last = t.pins
		t.order.MoveToFront(h.elem)
		return h
	}
	if size > t.budget {
		return nil
	}
	t.next++
	h := &handle{id: t.next, key: key, size: size, pins: 1, last: t.pins}
	h.elem = t.order.PushFront(h)
	t.byKey[key] = h
	t.used += size
	for t.used > t.budget || t.pins-t.order.Back().Value.(*handle).last > maxHandleAge {
		t.drop(t.order.Back().Value.(*handle))
	}
	return h
}

// drop takes h out of the table; it is released once no call uses it.
func (t *handleTable) drop(h *handle) {
	t.order.Remove(h.elem)
	delete(t.byKey, h.key)
	t.used -= h.size
	h.gone = true
	if h.pins == 0 {
		t.release = append(t.release, h.id)
		t.pending += h.size
	}
}

// unpin ends a call's use of h; ok: the call succeeded, so the server
// holds h's matrix.
func (t *handleTable) unpin(h *handle, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	h.pins--
	h.stored = h.stored || ok
	if h.gone && h.pins == 0 {
		t.release = append(t.release, h.id)
		t.pending += h.size
	}
}

// forget drops every handle (the server's store is then released with
// them).
func (t *handleTable) forget() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for t.order.Len() > 0 {
		t.drop(t.order.Back().Value.(*handle))
	}
}

// setSource records where the matrix just pinned under h lies.
func (t *handleTable) setSource(h *handle, s span) {
	t.mu.Lock()
	h.src = s
	t.mu.Unlock()
}

// dropWithin drops the handles of the matrices last pinned from within the
// given spans (the matrices their caller is done with, and their views:
// framework.Forgetter) and returns the handles to release now: those and
// the ones waiting for the quarter. A handle in use by a call in flight is
// released once that call is done.
func (t *handleTable) dropWithin(spans []span) []uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	for e := t.order.Front(); e != nil; {
		h, next := e.Value.(*handle), e.Next()
		if slices.ContainsFunc(spans, h.src.within) {
			t.drop(h)
		}
		e = next
	}
	out := t.release
	t.release, t.pending = nil, 0
	return out
}

// takeReleased returns the handles to release, once their matrices hold a
// quarter of the budget, and clears the list; nil before.
func (t *handleTable) takeReleased() []uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.pending < t.budget/4 {
		return nil
	}
	out := t.release
	t.release, t.pending = nil, 0
	return out
}

// isStored reports whether the server holds h's matrix.
func (t *handleTable) isStored(h *handle) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return h.stored
}
