package sysmem

import "syscall"

// Total returns the machine's physical memory in bytes (sysinfo's total
// RAM), or 1 TiB when the system does not say.
func Total() uint64 {
	var si syscall.Sysinfo_t
	if err := syscall.Sysinfo(&si); err != nil || si.Totalram == 0 {
		return fallback
	}
	return uint64(si.Totalram) * uint64(si.Unit)
}
