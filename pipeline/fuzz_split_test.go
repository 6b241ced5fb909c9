package pipeline

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
)

// FuzzSplitPartition: the values of a split column (one a line) become a
// partition whose labels are 0 (train) or folds 1..K, each present, with
// rows that train, or a one-line *InputError naming the file and column;
// never a panic or an allocation the size of a label.
func FuzzSplitPartition(f *testing.F) {
	for _, s := range []string{"train\neval\ntrain\neval", "1\n2\ntrain\n2\n1", "1\n1000000000000\ntrain",
		"1\n2\n9223372036854775807", "eval\n2", "1\n1", "train\ntrain", "eval\neval", "-1\n1", " 3 \n1\n2", "+2\n1", "0x2\n1", "2\n\n1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, column string) {
		values := strings.Split(column, "\n")
		part, err := SplitPartition("s.csv", "split", values)
		if err != nil {
			var ie *dataio.InputError
			s := err.Error()
			if !errors.As(err, &ie) || !errors.Is(err, framework.ErrUsage) || ie.File != "s.csv" || ie.Column != "split" || ie.Row < 0 || ie.Row > len(values)+1 || strings.ContainsAny(s, "\r\n") {
				t.Fatalf("want a one-line *InputError of s.csv, column split, got %T %q", err, s)
			}
			return
		}
		if len(part) != len(values) {
			t.Fatalf("%d labels for %d values", len(part), len(values))
		}
		k := slices.Max(part)
		count := make([]int, k+1)
		for _, v := range part {
			if v < 0 || v > len(values) {
				t.Fatalf("label %d outside 0..%d", v, len(values))
			}
			count[v]++
		}
		for fold := 1; fold <= k; fold++ {
			if count[fold] == 0 || len(part)-count[fold] == 0 {
				t.Fatalf("fold %d of %d has %d rows of %d", fold, k, count[fold], len(part))
			}
		}
		if _, err := partitionFolds(len(part), Config{Partition: part}); err != nil {
			t.Fatalf("a partition SplitPartition accepts is refused as Config.Partition: %v", err)
		}
	})
}
