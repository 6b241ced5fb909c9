package bench

import "testing"

// ranks gives ties their mean rank.
func TestRanks(t *testing.T) {
	got := ranks([]float64{3, 1, 3, 2})
	want := []float64{3.5, 1, 3.5, 2}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("ranks: got %v, want %v", got, want)
		}
	}
}
