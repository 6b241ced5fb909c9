package nn

import "testing"

// TestDenseSize: the parameters of dense layers are (in+1) out summed over
// the layers, the units their widths.
func TestDenseSize(t *testing.T) {
	s := DenseSize(100, []int{200, 100}, 1)
	if want := 101.0*200 + 201*100 + 101*1; s.Params != want || s.Units != 301 {
		t.Errorf("DenseSize(100, [200 100], 1) = %+v, want params %g, units 301", s, want)
	}
	if JoinWidths([]int{200, 100}) != "200,100" {
		t.Errorf("JoinWidths = %q", JoinWidths([]int{200, 100}))
	}
	if m := MachineMemory(); m < 1<<26 {
		t.Errorf("MachineMemory() = %d bytes", m)
	}
}
