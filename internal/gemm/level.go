package gemm

import (
	"os"
	"strings"

	"golang.org/x/sys/cpu"
)

// Level is a CPU feature level the products run at.
type Level int

const (
	// Generic is gonum's own Dgemm and Sgemm (SSE2 on amd64).
	Generic Level = iota
	// AVX2 is the packed GEMM on 256-bit AVX2 and FMA micro-kernels.
	AVX2
	// AVX512 is the packed GEMM on 512-bit AVX-512F micro-kernels.
	AVX512
)

// String returns the level's name as LAZYVI_CPU spells it.
func (l Level) String() string {
	switch l {
	case AVX2:
		return "avx2"
	case AVX512:
		return "avx512"
	default:
		return "generic"
	}
}

// EnvVar names the environment variable that caps the level: generic, avx2
// or avx512. A level the CPU lacks is capped at the best one it has; an
// unset or unknown value means the best one.
const EnvVar = "LAZYVI_CPU"

// Supported returns the best level this CPU and build run.
func Supported() Level {
	if !haveKernels || !cpu.X86.HasAVX2 || !cpu.X86.HasFMA {
		return Generic
	}
	// x/sys/cpu reports AVX-512F only where the OS saves the registers.
	if cpu.X86.HasAVX512F {
		return AVX512
	}
	return AVX2
}

// Active returns the level the products run at in this process: the best
// supported one, capped by LAZYVI_CPU.
func Active() Level { return active }

var active = chooseLevel(os.Getenv(EnvVar), Supported())

func chooseLevel(env string, best Level) Level {
	want := best
	switch strings.ToLower(strings.TrimSpace(env)) {
	case "generic":
		want = Generic
	case "avx2":
		want = AVX2
	case "avx512":
		want = AVX512
	}
	return min(want, best)
}
