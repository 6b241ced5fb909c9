// Package sysmem reads the machine's physical memory, the bound that the
// checks of a user's sizes (a network's widths, a forest's trees, an
// estimator's draws) hold them to before anything of that size is
// allocated.
package sysmem

// fallback is the memory Total reports where the machine's is not known:
// 1 TiB.
const fallback = 1 << 40
