package nn

import (
	"strings"
	"testing"
)

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

// TestCheckSizeNamesTheCause: a network whose parameters exceed the
// machine's memory is refused naming its widths; a small network with a
// minibatch too large for any machine is refused naming the batch; a
// small network on the default batch is accepted.
func TestCheckSizeNamesTheCause(t *testing.T) {
	small := DenseSize(6, []int{5}, 1)
	if err := CheckSize("mlp", "option hidden 5", small, 64); err != nil {
		t.Errorf("hidden 5, batch 64: %v", err)
	}
	err := CheckSize("mlp", "option hidden 5", small, 1e12)
	if err == nil || !strings.Contains(err.Error(), "option batch 1000000000000") || strings.Contains(err.Error(), "hidden") {
		t.Errorf("hidden 5, batch 1e12: %v", err)
	}
	err = CheckSize("mlp", "option hidden 1000000000", DenseSize(6, []int{1e9}, 1), 64)
	if err == nil || !strings.Contains(err.Error(), "option hidden 1000000000") || !strings.Contains(err.Error(), "use smaller widths") {
		t.Errorf("hidden 1e9: %v", err)
	}
}
