package nn

import "syscall"

// MachineMemory returns the machine's physical memory in bytes
// (sysinfo's total RAM), or fallbackMemory when the system does not say.
func MachineMemory() uint64 {
	var si syscall.Sysinfo_t
	if err := syscall.Sysinfo(&si); err != nil || si.Totalram == 0 {
		return fallbackMemory
	}
	return uint64(si.Totalram) * uint64(si.Unit)
}
