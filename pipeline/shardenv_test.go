package pipeline

import (
	"errors"
	"strings"
	"testing"

	"github.com/lazyvi/lazyvi/framework"
)

func envOf(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestParseShard(t *testing.T) {
	none := envOf()
	for _, c := range []struct {
		in    string
		count int
		env   func(string) string
		want  Shard
		err   string
	}{
		{in: "", env: none, want: Shard{}},
		{in: "1/1", env: none, want: Shard{Index: 0, Count: 1}},
		{in: "2/8", env: none, want: Shard{Index: 1, Count: 8}},
		{in: " 8 / 8 ", env: none, want: Shard{Index: 7, Count: 8}},
		{in: "0/8", env: none, err: "want K/N"},
		{in: "9/8", env: none, err: "want K/N"},
		{in: "2", env: none, err: "want K/N"},
		{in: "a/b", env: none, err: "want K/N"},
		{in: "1/0", env: none, err: "want K/N"},
		// Slurm: --array=0-2 and --array=1-3 are both three shards.
		{in: "auto", env: envOf("SLURM_ARRAY_TASK_ID", "2", "SLURM_ARRAY_TASK_MIN", "0", "SLURM_ARRAY_TASK_MAX", "2", "SLURM_ARRAY_TASK_COUNT", "3"), want: Shard{Index: 2, Count: 3}},
		{in: "auto", env: envOf("SLURM_ARRAY_TASK_ID", "1", "SLURM_ARRAY_TASK_MIN", "1", "SLURM_ARRAY_TASK_MAX", "3", "SLURM_ARRAY_TASK_COUNT", "3"), want: Shard{Index: 0, Count: 3}},
		{in: "auto", count: 3, env: envOf("SLURM_ARRAY_TASK_ID", "1", "SLURM_ARRAY_TASK_MIN", "1", "SLURM_ARRAY_TASK_MAX", "3", "SLURM_ARRAY_TASK_COUNT", "3"), want: Shard{Index: 0, Count: 3}},
		{in: "auto", count: 4, env: envOf("SLURM_ARRAY_TASK_ID", "1", "SLURM_ARRAY_TASK_COUNT", "3"), err: "disagrees"},
		{in: "auto", env: envOf("SLURM_ARRAY_TASK_ID", "3", "SLURM_ARRAY_TASK_MIN", "1", "SLURM_ARRAY_TASK_MAX", "9", "SLURM_ARRAY_TASK_COUNT", "3"), err: "a step or a list"},
		{in: "auto", env: envOf("SLURM_ARRAY_TASK_ID", "5", "SLURM_ARRAY_TASK_COUNT", "3"), err: "outside"},
		{in: "auto", env: envOf("SLURM_ARRAY_TASK_ID", "x", "SLURM_ARRAY_TASK_COUNT", "3"), err: "SLURM_ARRAY_TASK_ID=\"x\""},
		{in: "auto", env: envOf("SLURM_ARRAY_TASK_ID", "0"), err: "neither SLURM_ARRAY_TASK_COUNT nor --shard-count"},
		// Kubernetes Indexed Jobs: the index from the environment, the count from the flag.
		{in: "auto", count: 4, env: envOf("JOB_COMPLETION_INDEX", "3"), want: Shard{Index: 3, Count: 4}},
		{in: "auto", count: 4, env: envOf("JOB_COMPLETION_INDEX", "4"), err: "not below"},
		{in: "auto", env: envOf("JOB_COMPLETION_INDEX", "0"), err: "--shard-count"},
		{in: "auto", count: 4, env: envOf("JOB_COMPLETION_INDEX", "-1"), err: "non-negative"},
		{in: "auto", env: none, err: "neither SLURM_ARRAY_TASK_ID"},
	} {
		got, err := ParseShard(c.in, c.count, c.env)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || !errors.Is(err, framework.ErrUsage) {
				t.Errorf("ParseShard(%q, %d): err %v, want a usage error with %q", c.in, c.count, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ParseShard(%q, %d) = %v, %v; want %v", c.in, c.count, got, err, c.want)
		}
	}
}
