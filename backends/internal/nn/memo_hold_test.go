package nn

import (
	"testing"

	"gonum.org/v1/gonum/blas/blas64"
)

// sumOf is a memo computation: the input's values summed, with how many
// times it ran.
func sumOf(runs *int) func(xc blas64.General) (float64, int, error) {
	return func(xc blas64.General) (float64, int, error) {
		*runs++
		s := 0.0
		for _, v := range xc.Data[:xc.Rows*xc.Stride] {
			s += v
		}
		return s, 8, nil
	}
}

// A held input is found by its address and shape: its entry's values
// come back without a comparison, so a held input whose values changed
// (which the caller promised it would not) gets its old values, the proof
// that no comparison ran; unheld by Forget, it is compared again. Hold
// takes the address from an entry whose values are not the held input's
// (an input gone whose memory the held one now occupies), and another
// shape at the same address is not the held input.
func TestMemoHold(t *testing.T) {
	var m Memo[float64]
	runs := 0
	x := blas64.General{Rows: 2, Cols: 2, Stride: 2, Data: onHeap(1, 2, 3, 4)}
	m.Hold(x)
	view := blas64.General{Rows: 1, Cols: 2, Stride: 2, Data: x.Data}
	if v, _ := m.Values(view, sumOf(&runs)); v != 3 || runs != 1 {
		t.Fatalf("another shape at the held address: %v after %d runs, want 3 after 1", v, runs)
	}
	if v, _ := m.Values(x, sumOf(&runs)); v != 10 || runs != 2 {
		t.Fatalf("first lookup: %v after %d runs, want 10 after 2 (not the view's entry)", v, runs)
	}
	x.Data[0] = 11 // breaks the promise: the held entry is found all the same
	if v, _ := m.Values(x, sumOf(&runs)); v != 10 || runs != 2 {
		t.Fatalf("held lookup: %v after %d runs, want the entry's 10 without a run", v, runs)
	}
	m.Forget(x)
	if v, _ := m.Values(x, sumOf(&runs)); v != 20 || runs != 3 {
		t.Fatalf("after Forget: %v after %d runs, want 20 after 3", v, runs)
	}
	x.Data[1] = 12 // no longer held: compared, and computed again
	if v, _ := m.Values(x, sumOf(&runs)); v != 30 || runs != 4 {
		t.Fatalf("after Forget, changed: %v after %d runs, want 30 after 4", v, runs)
	}
	m.Forget(x)
	// x's memory now holds other values (a new input at the same address)
	// while the entry of the old ones is still there: holding the new
	// input must not find the old entry.
	y := blas64.General{Rows: 2, Cols: 2, Stride: 2, Data: onHeap(5, 5, 5, 5)}
	if _, err := m.Values(y, sumOf(&runs)); err != nil || runs != 5 {
		t.Fatalf("y: %v after %d runs", err, runs)
	}
	if _, err := m.Values(x, sumOf(&runs)); err != nil || runs != 6 {
		t.Fatalf("x: %v after %d runs", err, runs)
	}
	copy(x.Data, []float64{5, 5, 5, 6})
	m.Hold(x)
	if v, _ := m.Values(x, sumOf(&runs)); v != 21 || runs != 7 {
		t.Fatalf("held over a stale entry: %v after %d runs, want 21 after 7", v, runs)
	}
}

// heapSink keeps onHeap's slices reachable from a global, so that they are
// allocated in the heap, where their addresses do not change (a slice on a
// goroutine's stack moves when the stack grows).
var heapSink [][]float64

func onHeap(vs ...float64) []float64 {
	s := append([]float64(nil), vs...)
	heapSink = append(heapSink, s)
	return s
}
