package nn

import (
	"testing"

	"gonum.org/v1/gonum/blas/blas64"
)

// TestMemoCharge: Charge adds to an entry's size (found by content, not by
// the matrix's address), makes it the most recently used and evicts the
// least recently used others over the budget; an input not in the memo is
// not charged.
func TestMemoCharge(t *testing.T) {
	defer func(b int) { MemoBudget = b }(MemoBudget)
	MemoBudget = 100
	var m Memo[int]
	any1 := func(int) bool { return true }
	in := func(v float64) blas64.General {
		return blas64.General{Rows: 1, Cols: 2, Stride: 2, Data: []float64{v, v}}
	}
	for _, v := range []float64{1, 2} {
		if _, err := m.Values(in(v), func(blas64.General) (int, int, error) { return int(v), 40, nil }); err != nil {
			t.Fatal(err)
		}
	}
	m.Charge(in(3), 10, any1)
	if m.Bytes() != 80 {
		t.Fatalf("charging an input not in the memo: %d bytes, want 80", m.Bytes())
	}
	m.Charge(in(1), 10, any1) // a copy of input 1: another address
	if n, b := m.Len(), m.Bytes(); n != 2 || b != 90 {
		t.Fatalf("after charging 10 bytes: %d entries, %d bytes; want 2, 90", n, b)
	}
	m.Charge(in(1), 20, any1) // over the budget: input 2, now the least recently used, goes
	if n, b := m.Len(), m.Bytes(); n != 1 || b != 70 {
		t.Fatalf("after charging over the budget: %d entries, %d bytes; want 1, 70", n, b)
	}
	if v, _, ok := m.get(in(1)); !ok || v != 1 {
		t.Errorf("the charged entry was evicted (%v, %v)", v, ok)
	}
}

// TestMemoChargeEvicted: bytes derived from values that were evicted (a
// caller still holds them) are not charged to the entry computed for the
// same input since, which charges its own when it derives them.
func TestMemoChargeEvicted(t *testing.T) {
	defer func(b int) { MemoBudget = b }(MemoBudget)
	MemoBudget = 100
	var m Memo[*int]
	in := func(v float64) blas64.General {
		return blas64.General{Rows: 1, Cols: 2, Stride: 2, Data: []float64{v, v}}
	}
	values := func(v float64) *int {
		t.Helper()
		p, err := m.Values(in(v), func(blas64.General) (*int, int, error) { return new(int), 40, nil })
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	old := values(1)
	values(2)
	values(3) // evicts input 1's entry
	cur := values(1)
	if cur == old {
		t.Fatal("input 1's values were not recomputed after their eviction")
	}
	m.Charge(in(1), 10, func(v *int) bool { return v == old })
	if b := m.Bytes(); b != 80 {
		t.Errorf("charging the evicted values: %d bytes, want 80", b)
	}
	m.Charge(in(1), 10, func(v *int) bool { return v == cur })
	if b := m.Bytes(); b != 90 {
		t.Errorf("charging the current values: %d bytes, want 90", b)
	}
}

// TestMemoPoolShared: the Memos of a process share MemoBudget: a store in
// one evicts the least recently used entries of all of them, and a Memo
// whose entries are all gone leaves the pool (nothing keeps its model).
func TestMemoPoolShared(t *testing.T) {
	defer func(b int) { MemoBudget = b }(MemoBudget)
	MemoBudget = 100
	var a, b Memo[int]
	in := func(v float64) blas64.General {
		return blas64.General{Rows: 1, Cols: 2, Stride: 2, Data: []float64{v, v}}
	}
	put := func(m *Memo[int], v float64) {
		t.Helper()
		if _, err := m.Values(in(v), func(blas64.General) (int, int, error) { return int(v), 40, nil }); err != nil {
			t.Fatal(err)
		}
	}
	put(&a, 1)
	put(&a, 2)
	put(&b, 3) // 120 bytes in all: a's input 1, the least recently used, goes
	if a.Len() != 1 || b.Len() != 1 {
		t.Fatalf("after a store over the shared budget: %d and %d entries, want 1 and 1", a.Len(), b.Len())
	}
	if _, _, ok := a.get(in(2)); !ok {
		t.Error("a's most recent entry was evicted")
	}
	put(&b, 4)
	put(&b, 5) // a's input 2 is now the least recently used of all
	if a.Len() != 0 || b.Len() != 2 {
		t.Fatalf("%d and %d entries, want 0 and 2", a.Len(), b.Len())
	}
	pool.mu.Lock()
	_, inPool := pool.memos[&a]
	pool.mu.Unlock()
	if inPool {
		t.Error("a Memo without entries is still in the pool")
	}
}

// TestMemoMaxAge: a store drops the entries that went unused for more than
// memoMaxAge uses of any entry, within the budget; an entry used within
// them stays.
func TestMemoMaxAge(t *testing.T) {
	var m Memo[int]
	in := func(v float64) blas64.General {
		return blas64.General{Rows: 1, Cols: 2, Stride: 2, Data: []float64{v, v}}
	}
	use := func(v float64) {
		t.Helper()
		if _, err := m.Values(in(v), func(blas64.General) (int, int, error) { return int(v), 40, nil }); err != nil {
			t.Fatal(err)
		}
	}
	use(1) // left behind
	use(2) // used again below, within the window
	for range memoMaxAge {
		use(3)
	}
	use(2)
	use(4) // a store: input 1 is memoMaxAge + 2 uses old
	for _, c := range []struct {
		v    float64
		kept bool
	}{{1, false}, {2, true}, {3, true}, {4, true}} {
		if _, _, ok := m.get(in(c.v)); ok != c.kept {
			t.Errorf("input %g kept: %v, want %v", c.v, ok, c.kept)
		}
	}
	m.Clear()
}
