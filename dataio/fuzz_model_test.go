package dataio

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"reflect"
	"testing"
	"testing/iotest"
)

// withSum returns body followed by its checksum line, as WriteModel ends a
// model file: the fuzzer's bytes as a file whose checksum holds, so that
// mutations reach the header and the parameters.
func withSum(body []byte) []byte {
	sum := sha256.Sum256(body)
	return append(bytes.Clone(body), "sha256 "+hex.EncodeToString(sum[:])+"\n"...)
}

// bytesSource is a model file in memory, read again by State.
type bytesSource []byte

func (b bytesSource) name() string { return "m.vimodel" }

func (b bytesSource) readAt(off int64, n int) ([]byte, error) {
	if off < 0 || off+int64(n) > int64(len(b)) {
		return nil, &InputError{File: "m.vimodel", Msg: "model file changed since it was read (it is shorter)"}
	}
	return bytes.Clone(b[off : off+int64(n)]), nil
}

func FuzzReadModel(f *testing.F) {
	var good bytes.Buffer
	WriteModel(&good, savedExample())
	one := savedExample()
	one.CrossFit, one.Folds = 0, one.Folds[:1]
	var single bytes.Buffer
	WriteModel(&single, one)
	reps := savedExample()
	reps.Repeats = 2
	reps.Folds = append(reps.Folds, savedExample().Folds...)
	var repeated bytes.Buffer
	WriteModel(&repeated, reps)
	for _, b := range [][]byte{good.Bytes(), single.Bytes(), repeated.Bytes(), good.Bytes()[:40], []byte(modelMagic), nil, []byte("a,b\n1,2\n")} {
		f.Add(b)
		if len(b) > modelSumLen {
			f.Add(b[:len(b)-modelSumLen]) // the body, which the target completes
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		const source = "m.vimodel"
		for _, file := range [][]byte{data, withSum(data)} {
			m, err := ReadModel(bytes.NewReader(file), source)
			// The result does not depend on how the reads are cut.
			m1, err1 := ReadModel(iotest.OneByteReader(bytes.NewReader(file)), source)
			if (err == nil) != (err1 == nil) || err != nil && err.Error() != err1.Error() {
				t.Fatalf("one byte a read gives another result: %v / %v", err, err1)
			}
			if err != nil {
				checkInputError(t, err, source)
				continue
			}
			if !reflect.DeepEqual(m, m1) {
				t.Fatal("one byte a read gives another model")
			}
			// Read with the parameters left in the file, the same
			// model, each fold's State its parameters.
			lazy, err := readModel(bytes.NewReader(file), source, bytesSource(file))
			if err != nil {
				t.Fatalf("read with the parameters left in the file: %v", err)
			}
			if lazy.Repetitions()*lazy.PerRepeat() != len(lazy.Folds) {
				t.Fatalf("%d models for %d repetitions of %d", len(lazy.Folds), lazy.Repetitions(), lazy.PerRepeat())
			}
			for i := range lazy.Folds {
				b, err := lazy.Folds[i].State()
				if err != nil || !bytes.Equal(b, m.Folds[i].Params) {
					t.Fatalf("fold %d: state %q, %v; read whole %q", i+1, b, err, m.Folds[i].Params)
				}
				lazy.Folds[i].Params, lazy.Folds[i].src, lazy.Folds[i].off = b, nil, 0
			}
			if !reflect.DeepEqual(m, lazy) {
				t.Fatal("read with the parameters left in the file gives another model")
			}
			// Written again, it reads back the same.
			var buf bytes.Buffer
			if err := WriteModel(&buf, m); err != nil {
				t.Fatalf("a model read does not write: %v", err)
			}
			m2, err := ReadModel(&buf, source)
			if err != nil {
				t.Fatalf("a model written again does not read back: %v", err)
			}
			m.FileSum, m2.FileSum = [32]byte{}, [32]byte{}
			if !reflect.DeepEqual(m, m2) {
				t.Fatalf("round trip changed the model:\n%+v\n%+v", m, m2)
			}
		}
	})
}
