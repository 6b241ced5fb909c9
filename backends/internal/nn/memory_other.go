//go:build !linux

package nn

// MachineMemory returns fallbackMemory: off Linux the machine's physical
// memory is not read.
func MachineMemory() uint64 { return fallbackMemory }
