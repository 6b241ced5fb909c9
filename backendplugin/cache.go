package backendplugin

import (
	"container/list"
	"encoding/binary"
	"hash/maphash"
	"sync"
	"sync/atomic"
	"unsafe"

	"gonum.org/v1/gonum/mat"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/lazyvi/lazyvi/internal/pb"
)

// The matrix cache (see the Matrix message in internal/pb/backend.proto):
// the server keeps request matrices sent with a key, and the client sends
// only the key of a matrix the server has acknowledged.

// defaultMatrixCacheBytes is the server's byte budget for cached matrices,
// and the client's bound on the bytes of the matrices it believes cached.
// Lazy's working set is a few matrices per feature in flight (a fold's
// rows: ~5 MB per feature at n = 3000, p = 100; `vi bench highdim --n 3000`
// with 24 workers had 8 misses in all, as fast as with 256 MiB), while
// 256 MiB took that run's plugin process to 935 MB, a garbage-collected
// heap being up to twice its live data.
const defaultMatrixCacheBytes = 64 << 20

// minCachedElems: smaller matrices are cheaper to send than to hash.
const minCachedElems = 4096

// maxKnownKeys bounds the client's set of acknowledged keys.
const maxKnownKeys = 1 << 14

// entryOverhead is what an entry costs beyond its data in the accounting.
const entryOverhead = 128

// cacheMissMsg is the message of the server's FailedPrecondition error for a
// reference to a key it does not hold; the client recognises it by code and
// message and resends the call with the data.
const cacheMissMsg = "backendplugin: matrix cache miss"

var errCacheMiss = status.Error(codes.FailedPrecondition, cacheMissMsg)

// isCacheMiss reports the server's cache-miss error.
func isCacheMiss(err error) bool {
	st, ok := status.FromError(err)
	return ok && st.Code() == codes.FailedPrecondition && st.Message() == cacheMissMsg
}

// lru is a least-recently-used map bounded by a byte budget and an entry
// count (0: unbounded). It is not safe for concurrent use.
type lru[V any] struct {
	budget     int64
	maxEntries int
	used       int64
	order      *list.List // of *lruEntry[V], most recent first
	m          map[string]*list.Element
}

type lruEntry[V any] struct {
	key  string
	v    V
	size int64
}

func newLRU[V any](budget int64, maxEntries int) *lru[V] {
	return &lru[V]{budget: budget, maxEntries: maxEntries, order: list.New(), m: make(map[string]*list.Element)}
}

// get returns the value under key and marks it most recently used.
func (c *lru[V]) get(key string) (V, bool) {
	if e, ok := c.m[key]; ok {
		c.order.MoveToFront(e)
		return e.Value.(*lruEntry[V]).v, true
	}
	var zero V
	return zero, false
}

// add stores v under key unless it is there already (then it only becomes
// the most recently used) and evicts the least recently used entries past
// the bounds. An entry larger than the whole budget is not stored; add
// reports whether key is held afterwards.
func (c *lru[V]) add(key string, v V, size int64) bool {
	if e, ok := c.m[key]; ok {
		c.order.MoveToFront(e)
		return true
	}
	if size > c.budget {
		return false
	}
	c.m[key] = c.order.PushFront(&lruEntry[V]{key: key, v: v, size: size})
	c.used += size
	for c.used > c.budget || c.maxEntries > 0 && c.order.Len() > c.maxEntries {
		c.removeElement(c.order.Back())
	}
	return true
}

func (c *lru[V]) remove(key string) {
	if e, ok := c.m[key]; ok {
		c.removeElement(e)
	}
}

func (c *lru[V]) removeElement(e *list.Element) {
	en := c.order.Remove(e).(*lruEntry[V])
	delete(c.m, en.key)
	c.used -= en.size
}

// matrixCache is the server's cache of request matrices by key, safe for
// concurrent RPCs. The stored matrices alias the data of the requests that
// brought them; backends must not modify their inputs (in process they get
// the caller's matrices, which the estimators reuse too).
type matrixCache struct {
	mu  sync.Mutex
	lru *lru[*mat.Dense]

	// Counters for the tests.
	stores, hits, misses atomic.Int64
}

func newMatrixCache(budget int64) *matrixCache {
	return &matrixCache{lru: newLRU[*mat.Dense](budget, 0)}
}

// setBudget changes the byte budget (tests); entries past it go at the next
// store.
func (c *matrixCache) setBudget(b int64) {
	c.mu.Lock()
	c.lru.budget = b
	c.mu.Unlock()
}

// resolve unpacks the request matrix m, called name in errors: a plain
// matrix as fromPB does, a keyed one with data is also stored, a reference
// is looked up (errCacheMiss when absent).
func (c *matrixCache) resolve(name string, m *pb.Matrix) (*mat.Dense, error) {
	if m == nil || len(m.Key) == 0 || m.Rows <= 0 || m.Cols <= 0 {
		return matrixArg(name, m)
	}
	key := string(m.Key)
	if len(m.Data) == 0 { // a reference
		c.mu.Lock()
		d, ok := c.lru.get(key)
		c.mu.Unlock()
		if !ok {
			c.misses.Add(1)
			return nil, errCacheMiss
		}
		if r, cc := d.Dims(); int64(r) != m.Rows || int64(cc) != m.Cols {
			return nil, status.Errorf(codes.InvalidArgument, "%s: the cached matrix under this key is %d x %d, the reference says %d x %d",
				name, r, cc, m.Rows, m.Cols)
		}
		c.hits.Add(1)
		return d, nil
	}
	d, err := matrixArg(name, m)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.lru.add(key, d, 8*int64(len(m.Data))+int64(len(key))+entryOverhead)
	c.mu.Unlock()
	c.stores.Add(1)
	return d, nil
}

// The client's side.

// hashSeeds are the two fixed per-process seeds of the content keys.
var hashSeeds = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}

// keyHeader is the length of a key's verbatim part: rows, cols and row
// layout.
const keyHeader = 24

// matrixKey is the content key of a packed matrix: its rows, cols and row
// layout verbatim (the same values in another shape or layout are another
// matrix to the server, which computes on the layout it stored), then two
// 64-bit hash/maphash hashes, under the two seeds, of the bits of its
// values: 128 bits of hash over the values, as before this key had the
// header verbatim. The key is this process's name for the content; the
// server only compares it.
//
// The values are hashed as one string (maphash.Comparable), which hands
// them to the runtime's memhash in one call; maphash.Hash and
// maphash.Bytes feed it 128 bytes at a time, chaining the state, which
// hashed lazy's 6667 x 100 training rows (5.3 MB) at a fifth of the speed,
// on every Krylov product. Both are the same seeded function family (the
// runtime's AES hash where the CPU has AES, else its wyhash fallback);
// nothing else changed: equal values give equal keys, and two different
// matrices of one shape and layout share a key only if both 64-bit hashes
// collide under independent random seeds.
func matrixKey(m *pb.Matrix) string {
	var key [keyHeader + 16]byte
	binary.LittleEndian.PutUint64(key[:8], uint64(m.Rows))
	binary.LittleEndian.PutUint64(key[8:], uint64(m.Cols))
	if l := m.Layout; l != nil {
		binary.LittleEndian.PutUint32(key[16:], 1+l.Phase)
		binary.LittleEndian.PutUint32(key[20:], l.Skew)
	}
	// The float64s as their in-memory bytes: the key only has to be
	// stable within this process, so the host's byte order does.
	var raw string
	if len(m.Data) > 0 {
		raw = unsafe.String((*byte)(unsafe.Pointer(unsafe.SliceData(m.Data))), 8*len(m.Data))
	}
	for i, seed := range hashSeeds {
		binary.LittleEndian.PutUint64(key[keyHeader+8*i:], maphash.Comparable(seed, raw))
	}
	return string(key[:])
}

// knownKeys is the client's set of keys the server has acknowledged (a call
// that sent the data succeeded), bounded in count and in the bytes of the
// matrices, as an LRU so that it tends to forget what the server's LRU
// evicts. A key may still have been evicted by the server; the cache-miss
// retry covers that.
type knownKeys struct {
	mu  sync.Mutex
	lru *lru[struct{}]
}

func newKnownKeys() *knownKeys {
	return &knownKeys{lru: newLRU[struct{}](defaultMatrixCacheBytes, maxKnownKeys)}
}

func (k *knownKeys) has(key string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	_, ok := k.lru.get(key)
	return ok
}

func (k *knownKeys) add(key string, size int64) {
	k.mu.Lock()
	k.lru.add(key, struct{}{}, size)
	k.mu.Unlock()
}

func (k *knownKeys) forget(key string) {
	k.mu.Lock()
	k.lru.remove(key)
	k.mu.Unlock()
}

// wireArg is one matrix argument of a call, packed once for the call and its
// retry.
type wireArg struct {
	full *pb.Matrix // with Key set when the matrix is cached; nil for a nil matrix
	ref  *pb.Matrix // the reference (no data) for a key the server holds; nil otherwise
}

// send returns the message to send: the reference, or the full matrix when
// full is true or there is no reference.
func (a wireArg) send(full bool) *pb.Matrix {
	if a.ref != nil && !full {
		return a.ref
	}
	return a.full
}

// args packs matrix arguments for a call. Without a caching server, or for
// small matrices, they are packed as requestPB does; otherwise keyed, and sent as
// references when the server has acknowledged their keys.
func (c *conn) args(xs ...mat.Matrix) []wireArg {
	out := make([]wireArg, len(xs))
	for i, x := range xs {
		m := requestPB(x)
		out[i].full = m
		if c.known == nil || m == nil || len(m.Data) < minCachedElems {
			continue
		}
		// toPB may alias the caller's data: set the key on this fresh
		// message, never on shared state.
		m.Key = []byte(matrixKey(m))
		if c.known.has(string(m.Key)) {
			out[i].ref = &pb.Matrix{Rows: m.Rows, Cols: m.Cols, Key: m.Key}
		}
	}
	return out
}

// withArgs runs call, an RPC on the matrix arguments xs as args packs them
// (call gets one message per x). On the server's cache miss it forgets the
// keys it sent as references and calls once more with all the data. After
// a success the keys sent with their data are acknowledged.
func (c *conn) withArgs(xs []mat.Matrix, call func(ms []*pb.Matrix) error) error {
	args := c.args(xs...)
	ms := make([]*pb.Matrix, len(args))
	refs := false
	for i, a := range args {
		ms[i] = a.send(false)
		refs = refs || a.ref != nil
	}
	full := !refs
	err := call(ms)
	if err != nil && refs && isCacheMiss(err) {
		for i, a := range args {
			if a.ref != nil {
				c.known.forget(string(a.ref.Key))
			}
			ms[i] = a.send(true)
		}
		full = true
		err = call(ms)
	}
	if err == nil && c.known != nil {
		for _, a := range args {
			// m's values may be in data_raw by now (rawSender): its size
			// is its shape's.
			if m := a.full; m != nil && len(m.Key) > 0 && (full || a.ref == nil) {
				c.known.add(string(m.Key), 8*m.Rows*m.Cols+int64(len(m.Key))+entryOverhead)
			}
		}
	}
	return err
}
