package pipeline

import (
	"strconv"
	"strings"

	"github.com/lazyvi/lazyvi/framework"
)

// ParseShard reads a shard as vi's --shard flag gives it: "K/N"
// (1 <= K <= N), the K-th of N slices, or "auto", the index and count from
// a job scheduler's environment read by getenv (see shardFromEnv), with
// count (vi's --shard-count) as the count when the scheduler does not
// give one (0: none given). "" is no shard. Its usage errors name vi's
// flags.
func ParseShard(s string, count int, getenv func(string) string) (Shard, error) {
	if s == "" {
		return Shard{}, nil
	}
	if s == "auto" {
		return shardFromEnv(getenv, count)
	}
	k, n, ok := strings.Cut(s, "/")
	ki, err1 := strconv.Atoi(strings.TrimSpace(k))
	ni, err2 := strconv.Atoi(strings.TrimSpace(n))
	if !ok || err1 != nil || err2 != nil || ni < 1 || ki < 1 || ki > ni {
		return Shard{}, framework.Usagef("--shard %q: want K/N with 1 <= K <= N (e.g. 2/8), or auto", s)
	}
	return Shard{Index: ki - 1, Count: ni}, nil
}

// shardFromEnv reads the shard of a job array's task from its scheduler's
// environment:
//
//   - Slurm: SLURM_ARRAY_TASK_ID minus SLURM_ARRAY_TASK_MIN (0 when unset)
//     is the index and SLURM_ARRAY_TASK_COUNT the count, so --array=0-7
//     and --array=1-8 both make 8 shards; an array with a step or a list
//     of ids (--array=1,3,9) is refused, its ids are not 0..count-1 once
//     shifted.
//   - Kubernetes Indexed Jobs: JOB_COMPLETION_INDEX is the index; the count
//     (the Job's completions) is not in the environment and comes from
//     count (--shard-count).
//
// count > 0 must agree with Slurm's count when both are given.
func shardFromEnv(getenv func(string) string, count int) (Shard, error) {
	if count < 0 {
		return Shard{}, framework.Usagef("--shard-count must be positive, got %d", count)
	}
	atoi := func(name string) (int, bool, error) {
		v := strings.TrimSpace(getenv(name))
		if v == "" {
			return 0, false, nil
		}
		i, err := strconv.Atoi(v)
		if err != nil || i < 0 {
			return 0, true, framework.Usagef("--shard auto: %s=%q is not a non-negative integer", name, v)
		}
		return i, true, nil
	}
	id, haveID, err := atoi("SLURM_ARRAY_TASK_ID")
	if err != nil {
		return Shard{}, err
	}
	if haveID {
		lo, _, err := atoi("SLURM_ARRAY_TASK_MIN")
		if err != nil {
			return Shard{}, err
		}
		n, haveN, err := atoi("SLURM_ARRAY_TASK_COUNT")
		if err != nil {
			return Shard{}, err
		}
		if !haveN {
			n = count
		}
		if n < 1 {
			return Shard{}, framework.Usagef("--shard auto: SLURM_ARRAY_TASK_ID is set but neither SLURM_ARRAY_TASK_COUNT nor --shard-count")
		}
		if count > 0 && count != n {
			return Shard{}, framework.Usagef("--shard auto: --shard-count %d disagrees with SLURM_ARRAY_TASK_COUNT=%d", count, n)
		}
		if hi, haveHi, err := atoi("SLURM_ARRAY_TASK_MAX"); err != nil {
			return Shard{}, err
		} else if haveHi && hi-lo+1 != n {
			return Shard{}, framework.Usagef("--shard auto: the Slurm array %d-%d has %d tasks, not %d ids in a row (a step or a list of ids?); use --array=0-%d", lo, hi, n, hi-lo+1, n-1)
		}
		if id < lo || id-lo >= n {
			return Shard{}, framework.Usagef("--shard auto: SLURM_ARRAY_TASK_ID=%d is outside the array's %d tasks from %d", id, n, lo)
		}
		return Shard{Index: id - lo, Count: n}, nil
	}
	idx, haveIdx, err := atoi("JOB_COMPLETION_INDEX")
	if err != nil {
		return Shard{}, err
	}
	if haveIdx {
		if count < 1 {
			return Shard{}, framework.Usagef("--shard auto: JOB_COMPLETION_INDEX is set; give the Job's completions as --shard-count")
		}
		if idx >= count {
			return Shard{}, framework.Usagef("--shard auto: JOB_COMPLETION_INDEX=%d is not below --shard-count %d", idx, count)
		}
		return Shard{Index: idx, Count: count}, nil
	}
	return Shard{}, framework.Usagef("--shard auto: neither SLURM_ARRAY_TASK_ID (a Slurm job array) nor JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) is set")
}
