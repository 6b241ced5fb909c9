package dataio

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"github.com/lazyvi/lazyvi/framework"
	"io"
	"strings"
	"testing"
)

// countingReader is head, then the byte fill up to limit bytes in all
// (a large file), counting what is read from it.
type countingReader struct {
	head  []byte
	fill  byte
	n     int64
	limit int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	if c.n >= c.limit {
		return 0, io.EOF
	}
	k := 0
	for k < len(p) && c.n < c.limit {
		if c.n < int64(len(c.head)) {
			p[k] = c.head[c.n]
		} else {
			p[k] = c.fill
		}
		k++
		c.n++
	}
	return k, nil
}

// TestReadModelReadsOnlyWhatItDeclares: a large file that is no model
// file (/dev/zero) is refused after its magic; one whose header declares
// more than the bound, after its size; one whose header declares more
// parameters than it holds reads only what it holds; and a damaged header
// followed by a long stream is judged in constant memory by its checksum.
func TestReadModelReadsOnlyWhatItDeclares(t *testing.T) {
	var good bytes.Buffer
	if err := WriteModel(&good, savedExample()); err != nil {
		t.Fatal(err)
	}
	hl := binary.LittleEndian.Uint64(good.Bytes()[len(modelMagic):])
	headerEnd := len(modelMagic) + 8 + int(hl)
	huge := func(size uint64) []byte {
		b := append([]byte(modelMagic), 0, 0, 0, 0, 0, 0, 0, 0)
		binary.LittleEndian.PutUint64(b[len(modelMagic):], size)
		return b
	}
	// A header that declares 1 TB of parameters in its first fold,
	// checksum and all consistent as far as it goes.
	m := savedExample()
	var w bytes.Buffer
	WriteModel(&w, m)
	bigFold := bytes.Replace(w.Bytes()[:len(w.Bytes())-modelSumLen], []byte(`"params_bytes":3`), []byte(`"params_bytes":1099511627776`), 1)
	binary.LittleEndian.PutUint64(bigFold[len(modelMagic):], hl+uint64(len("1099511627776")-1))
	for _, c := range []struct {
		name    string
		r       *countingReader
		maxRead int64
		want    string
	}{
		{"/dev/zero", &countingReader{limit: 64 << 20}, 64 << 10, "not a lazyvi model file"},
		{"header size", &countingReader{head: huge(1 << 40), limit: 64 << 20}, 64 << 10, "header is damaged"},
		{"params size", &countingReader{head: bigFold, limit: int64(len(bigFold)) + 1<<20}, 1 << 30, "truncated in its parameters"},
		{"damaged header, long tail", &countingReader{head: append(good.Bytes()[:headerEnd-2:headerEnd-2], '!', '}'), fill: 'x', limit: 64 << 20}, 1 << 30, "checksum"},
	} {
		_, err := ReadModel(c.r, "m.vimodel")
		switch {
		case err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, framework.ErrUsage):
			t.Errorf("%s: err %v, want an input error with %q", c.name, err, c.want)
		case c.r.n > c.maxRead:
			t.Errorf("%s: read %d bytes, want at most %d", c.name, c.r.n, c.maxRead)
		}
	}

	// A file of another format that streams long before its valid
	// checksum: told as another format, not read into memory whole.
	other := bytes.Replace(good.Bytes()[:headerEnd], []byte(`"format":2`), []byte(`"format":9`), 1)
	body := append(other, bytes.Repeat([]byte{7}, 1<<20)...)
	sum := sha256.Sum256(body)
	file := append(body, "sha256 "+hex.EncodeToString(sum[:])+"\n"...)
	if _, err := ReadModel(bytes.NewReader(file), "m.vimodel"); err == nil || !strings.Contains(err.Error(), "model file format 9") {
		t.Errorf("another format with a long body: err %v", err)
	}
	if _, err := ReadModel(io.MultiReader(bytes.NewReader(file), strings.NewReader("x")), "m.vimodel"); err == nil || !strings.Contains(err.Error(), "checksum") {
		t.Errorf("another format with a byte after its checksum: err %v", err)
	}
}
