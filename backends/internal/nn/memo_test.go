package nn

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"gonum.org/v1/gonum/blas/blas64"
)

func memoInput() blas64.General {
	return blas64.General{Rows: 2, Cols: 2, Stride: 2, Data: []float64{1, 2, 3, 4}}
}

// TestMemoValuesOnce: a call that asks for an input whose values another
// call is computing waits for them instead of computing them again, even
// when they are too large to be stored (so that it can only have them
// from the flight).
func TestMemoValuesOnce(t *testing.T) {
	var m Memo[int]
	var computes atomic.Int32
	started, release := make(chan struct{}), make(chan struct{})
	waiting := make(chan struct{}, 1)
	testHookWait = func() { waiting <- struct{}{} }
	defer func() { testHookWait = nil }()
	compute := func(xc blas64.General) (int, int, error) {
		if computes.Add(1) == 1 {
			close(started)
			<-release
		}
		return 42, MemoBudget + 1, nil
	}
	var wg sync.WaitGroup
	got := make([]int, 2)
	errs := make([]error, 2)
	wg.Add(1)
	go func() {
		defer wg.Done()
		got[0], errs[0] = m.Values(memoInput(), compute)
	}()
	<-started
	wg.Add(1)
	go func() {
		defer wg.Done()
		got[1], errs[1] = m.Values(memoInput(), compute) // another matrix, the same values
	}()
	<-waiting
	close(release)
	wg.Wait()
	for i := range got {
		if errs[i] != nil || got[i] != 42 {
			t.Errorf("call %d: %d, %v; want 42, nil", i, got[i], errs[i])
		}
	}
	if n := computes.Load(); n != 1 {
		t.Errorf("computed %d times, want once", n)
	}
	if m.Len() != 0 {
		t.Errorf("%d entries kept of values larger than the budget", m.Len())
	}
	// Stored values are found without computing.
	if _, err := m.Values(memoInput(), func(blas64.General) (int, int, error) { return 7, 8, nil }); err != nil {
		t.Fatal(err)
	}
	if v, err := m.Values(memoInput(), func(blas64.General) (int, int, error) { return 0, 0, errors.New("computed again") }); err != nil || v != 7 {
		t.Errorf("stored values: %d, %v; want 7, nil", v, err)
	}
}

// TestMemoValuesFailed: when the computation a call waits for fails, the
// call computes the values itself; the failed call returns its error and
// nothing is stored.
func TestMemoValuesFailed(t *testing.T) {
	var m Memo[int]
	fail := errors.New("canceled")
	started, release := make(chan struct{}), make(chan struct{})
	waiting := make(chan struct{}, 1)
	testHookWait = func() { waiting <- struct{}{} }
	defer func() { testHookWait = nil }()
	var first error
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, first = m.Values(memoInput(), func(blas64.General) (int, int, error) {
			close(started)
			<-release
			return 0, 0, fail
		})
	}()
	<-started
	second := make(chan int)
	go func() {
		v, err := m.Values(memoInput(), func(blas64.General) (int, int, error) { return 5, 8, nil })
		if err != nil {
			t.Error(err)
		}
		second <- v
	}()
	<-waiting
	close(release)
	<-done
	if !errors.Is(first, fail) {
		t.Errorf("the failed call returned %v, want its error", first)
	}
	if v := <-second; v != 5 {
		t.Errorf("the waiting call got %d, want its own computation's 5", v)
	}
	if m.Len() != 1 {
		t.Errorf("%d entries, want the second call's only", m.Len())
	}
}

// TestMemoValuesPanic: a computation that panics releases its waiters,
// which compute the values themselves, and the panic goes on up.
func TestMemoValuesPanic(t *testing.T) {
	var m Memo[int]
	started, release := make(chan struct{}), make(chan struct{})
	waiting := make(chan struct{}, 1)
	testHookWait = func() { waiting <- struct{}{} }
	defer func() { testHookWait = nil }()
	panicked := make(chan any)
	go func() {
		defer func() { panicked <- recover() }()
		m.Values(memoInput(), func(blas64.General) (int, int, error) {
			close(started)
			<-release
			panic("boom")
		})
	}()
	<-started
	second := make(chan int)
	go func() {
		v, _ := m.Values(memoInput(), func(blas64.General) (int, int, error) { return 9, 8, nil })
		second <- v
	}()
	<-waiting
	close(release)
	if r := <-panicked; r != "boom" {
		t.Errorf("recovered %v, want the computation's panic", r)
	}
	if v := <-second; v != 9 {
		t.Errorf("the waiting call got %d, want 9", v)
	}
}

// TestMemoValuesCleared: a computation that started before Clear (the
// parameters changed) stores nothing, and a call after Clear computes the
// values anew instead of waiting for it.
func TestMemoValuesCleared(t *testing.T) {
	var m Memo[int]
	started, release := make(chan struct{}), make(chan struct{})
	done := make(chan int)
	go func() {
		v, _ := m.Values(memoInput(), func(blas64.General) (int, int, error) {
			close(started)
			<-release
			return 1, 8, nil
		})
		done <- v
	}()
	<-started
	m.Clear()
	v, err := m.Values(memoInput(), func(blas64.General) (int, int, error) { return 2, 8, nil })
	if err != nil || v != 2 {
		t.Errorf("after Clear: %d, %v; want the new computation's 2", v, err)
	}
	close(release)
	if v := <-done; v != 1 {
		t.Errorf("the call from before Clear got %d, want its own 1", v)
	}
	got, err := m.Values(memoInput(), func(blas64.General) (int, int, error) { return 3, 8, nil })
	if err != nil || got != 2 || m.Len() != 1 {
		t.Errorf("stored after both: %d (%d entries), want the new computation's 2 alone", got, m.Len())
	}
}

// TestMemoForget: Forget drops the entry of the input it is given, found
// by content from another matrix as from the same one, and no other; its
// bytes leave the memo's count, and the next Values computes again.
func TestMemoForget(t *testing.T) {
	var m Memo[int]
	a, b := memoInput(), blas64.General{Rows: 1, Cols: 3, Stride: 3, Data: []float64{5, 6, 7}}
	for _, x := range []blas64.General{a, b} {
		if _, err := m.Values(x, func(xc blas64.General) (int, int, error) { return xc.Rows, 100, nil }); err != nil {
			t.Fatal(err)
		}
	}
	m.Forget(blas64.General{Rows: 2, Cols: 2, Stride: 3, Data: []float64{1, 2, 0, 3, 4}}) // a's values, strided
	if m.Len() != 1 || m.Bytes() != 100 {
		t.Fatalf("after forgetting a: %d entries of %d bytes, want b's alone (100 bytes)", m.Len(), m.Bytes())
	}
	m.Forget(a) // not there any more
	m.Forget(blas64.General{Rows: 1, Cols: 3, Stride: 3, Data: []float64{5, 6, 8}})
	if m.Len() != 1 {
		t.Fatalf("forgetting other values dropped b's entry")
	}
	m.Forget(b)
	if m.Len() != 0 || m.Bytes() != 0 {
		t.Fatalf("after forgetting both: %d entries of %d bytes", m.Len(), m.Bytes())
	}
	computed := false
	if _, err := m.Values(a, func(blas64.General) (int, int, error) { computed = true; return 2, 100, nil }); err != nil || !computed {
		t.Errorf("Values after Forget: computed %v, err %v; want a new computation", computed, err)
	}

	// The views of a matrix (its rows' folds) go with it; other inputs stay.
	rows := blas64.General{Rows: 4, Cols: 2, Stride: 2, Data: []float64{1, 2, 3, 4, 5, 6, 7, 8}}
	fold := blas64.General{Rows: 2, Cols: 2, Stride: 2, Data: rows.Data[4:]}
	for _, x := range []blas64.General{rows, fold} {
		if _, err := m.Values(x, func(xc blas64.General) (int, int, error) { return xc.Rows, 100, nil }); err != nil {
			t.Fatal(err)
		}
	}
	m.Forget(rows)
	if m.Len() != 1 || m.Bytes() != 100 {
		t.Errorf("after forgetting the rows: %d entries of %d bytes, want a's alone", m.Len(), m.Bytes())
	}
}
