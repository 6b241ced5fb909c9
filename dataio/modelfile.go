package dataio

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"math"

	"github.com/lazyvi/lazyvi/framework"
)

// ModelFileFormat is the version of the model file layout that WriteModel
// writes and ReadModel reads.
const ModelFileFormat = 1

// modelMagic opens every model file.
const modelMagic = "lazyvi-model\n"

// A SavedModel is a trained full model (one per cross-fitting fold) with
// everything needed to use it again on the same data exactly as the run
// that trained it would have: the backend and its options, the split, the
// seed, the data's fingerprint, the standardisation and the parameters.
type SavedModel struct {
	Format int `json:"format"`
	// Protocol is the backend plugin protocol version of the lazyvi that
	// wrote the file; parameters are only read back by the same version.
	Protocol int    `json:"protocol"`
	Backend  string `json:"backend"`
	// Options are the run's backend options (pipeline.Config.Options) and
	// Candidates the names of the option settings it chose among
	// (pipeline.Config.Candidates); each fold says what it chose.
	Options    map[string]string `json:"options,omitempty"`
	Candidates []string          `json:"candidates,omitempty"`
	Task       string            `json:"task"`
	Classes    int               `json:"classes,omitempty"`
	Target     string            `json:"target"`
	Features   []string          `json:"features"`
	Seed       int64             `json:"seed"`
	// TrainFrac is the train share of a single split; CrossFit the number
	// of cross-fitting folds (then Folds holds one model per fold).
	TrainFrac float64 `json:"train_frac,omitempty"`
	CrossFit  int     `json:"crossfit,omitempty"`
	// Data is the fingerprint of the data the model was trained on
	// (DataFingerprint); a model is used only with the same data.
	Data string `json:"data"`
	// Partition identifies the explicit evaluation rows the models were
	// trained with (pipeline.PartitionSum of Config.Partition; "" for the
	// seeded split or folds); a model is used only with the same.
	Partition string      `json:"partition,omitempty"`
	Folds     []SavedFold `json:"folds"`

	// Source is the file's name, for messages (ReadModel sets it).
	Source string `json:"-"`
	// FileSum is the SHA-256 of the whole file as read, checksum line
	// included (ReadModel sets it, from the hash it checks the checksum
	// with): it identifies the file's content without reading it again.
	FileSum [sha256.Size]byte `json:"-"`
}

// SavedFold is one trained model: the standardisation of its train rows,
// the options it was trained with and how they were chosen (Config.
// Candidates), and the backend's parameters (Persister's state).
type SavedFold struct {
	Mean []float64 `json:"mean"`
	SD   []float64 `json:"sd"`
	// Options are the full model's (Problem.Spec.Options): Config.Options
	// with the chosen candidate's laid over them.
	Options    map[string]string          `json:"options,omitempty"`
	Chosen     string                     `json:"chosen,omitempty"`
	Candidates []framework.CandidateScore `json:"candidates,omitempty"`
	Selection  string                     `json:"selection,omitempty"`
	Params     []byte                     `json:"-"`
	Size       int                        `json:"params_bytes"`
}

// WriteModel writes m: the magic line, the header (JSON, one line), each
// fold's parameters as raw bytes, and a last line "sha256 HEX" over all
// that precedes it.
func WriteModel(w io.Writer, m *SavedModel) error {
	m.Format = ModelFileFormat
	for i := range m.Folds {
		m.Folds[i].Size = len(m.Folds[i].Params)
	}
	head, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("model file header: %w", err)
	}
	h := sha256.New()
	bw := bufio.NewWriter(io.MultiWriter(w, h))
	bw.WriteString(modelMagic)
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(head)))
	bw.Write(n[:])
	bw.Write(head)
	for _, f := range m.Folds {
		bw.Write(f.Params)
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "sha256 %s\n", hex.EncodeToString(h.Sum(nil)))
	return err
}

// maxModelHeader bounds the header a model file may declare.
const maxModelHeader = 1 << 30

// modelSumLen is the length of a model file's checksum line: "sha256 " +
// 64 hex digits + "\n".
const modelSumLen = len("sha256 ") + 64 + 1

// ReadModel reads a model file written by WriteModel, checking its magic,
// format version and checksum; name is the file's name for errors, which
// are input errors (a usage error for the CLI). It reads no further than
// the magic, the header's declared size and the sizes the header declares
// allow: a large file that is no model file (/dev/zero) is refused after
// its first bytes, and what is read is never more than the file holds.
func ReadModel(r io.Reader, name string) (*SavedModel, error) {
	bad := func(format string, args ...any) error {
		return &InputError{File: name, Msg: fmt.Sprintf(format, args...)}
	}
	damaged := func() error { return bad("model file is damaged or was modified (checksum mismatch)") }
	h := sha256.New()
	// read reads n bytes (growing its buffer as they come, so that a
	// damaged size costs no memory the file does not fill) into the hash.
	read := func(n uint64) ([]byte, error) {
		b, err := io.ReadAll(io.LimitReader(r, int64(n)))
		if err != nil {
			return nil, fmt.Errorf("read model file %s: %w", name, err)
		}
		h.Write(b)
		return b, nil
	}
	magic, err := read(uint64(len(modelMagic)))
	if err != nil {
		return nil, err
	}
	if string(magic) != modelMagic {
		return nil, bad("not a lazyvi model file (written by vi train)")
	}
	size, err := read(8)
	if err != nil {
		return nil, err
	}
	if len(size) < 8 {
		return nil, bad("model file is truncated")
	}
	hl := binary.LittleEndian.Uint64(size)
	if hl > maxModelHeader {
		return nil, bad("model file header is damaged (it declares %d bytes)", hl)
	}
	head, err := read(hl)
	if err != nil {
		return nil, err
	}
	if uint64(len(head)) < hl {
		return nil, bad("model file is damaged or was modified (truncated in its header)")
	}
	var m SavedModel
	dec := json.NewDecoder(bytes.NewReader(head))
	dec.DisallowUnknownFields()
	headErr := dec.Decode(&m)
	total, sizesOK := paramsSize(m.Folds)
	if headErr != nil || m.Format != ModelFileFormat || !sizesOK {
		// A header of another format, or a damaged one: the checksum
		// says which, over the rest of the file as it streams by.
		if ok, err := restMatchesSum(r, h); err != nil {
			return nil, fmt.Errorf("read model file %s: %w", name, err)
		} else if !ok {
			return nil, damaged()
		}
		var probe struct {
			Format int `json:"format"`
		}
		if json.Unmarshal(head, &probe) == nil && probe.Format != ModelFileFormat {
			return nil, bad("model file format %d; this lazyvi reads format %d (train the model again with this vi)", probe.Format, ModelFileFormat)
		}
		if headErr != nil {
			return nil, bad("model file header: %v", headErr)
		}
		return nil, bad("model file header declares parameter sizes that do not add up")
	}
	params, err := read(total)
	if err != nil {
		return nil, err
	}
	if uint64(len(params)) < total {
		return nil, bad("model file is damaged or was modified (truncated in its parameters)")
	}
	for i := range m.Folds {
		sz := m.Folds[i].Size
		m.Folds[i].Params = params[:sz:sz]
		params = params[sz:]
	}
	tail, err := io.ReadAll(io.LimitReader(r, int64(modelSumLen)+1))
	if err != nil {
		return nil, fmt.Errorf("read model file %s: %w", name, err)
	}
	if string(tail) != "sha256 "+hex.EncodeToString(h.Sum(nil))+"\n" {
		return nil, damaged()
	}
	h.Write(tail)
	h.Sum(m.FileSum[:0])
	m.Source = name
	if len(m.Folds) == 0 || (m.CrossFit >= 2 && len(m.Folds) != m.CrossFit) || (m.CrossFit < 2 && len(m.Folds) != 1) {
		return nil, bad("model file holds %d models for crossfit %d", len(m.Folds), m.CrossFit)
	}
	return &m, nil
}

// LoadModel reads the model file at path (ReadModel), returning as soon as
// ctx is done even while the file blocks (a FIFO without a writer).
func LoadModel(ctx context.Context, path string) (*SavedModel, error) {
	return LoadFile(ctx, path, ReadModel)
}

// paramsSize returns the folds' parameter sizes added up, and whether each
// is non-negative and the sum at most maxModelParams.
func paramsSize(folds []SavedFold) (uint64, bool) {
	var total uint64
	for _, f := range folds {
		if f.Size < 0 || uint64(f.Size) > maxModelParams-total {
			return 0, false
		}
		total += uint64(f.Size)
	}
	return total, true
}

// maxModelParams bounds the parameter bytes a model file may declare (the
// bytes are read only as far as the file holds them).
const maxModelParams = 1 << 50

// restMatchesSum reads r to its end and reports whether it is a checksum
// line ("sha256 HEX\n") of h with what precedes the line added to h: the
// check of a file whose layout is unknown, in constant memory.
func restMatchesSum(r io.Reader, h hash.Hash) (bool, error) {
	// win holds the last modelSumLen bytes read; what falls out of it is
	// hashed.
	win := make([]byte, 0, 2*modelSumLen)
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		for b := buf[:n]; len(b) > 0; {
			k := min(len(b), cap(win)-len(win))
			win = append(win, b[:k]...)
			b = b[k:]
			if len(win) == cap(win) {
				h.Write(win[:modelSumLen])
				win = append(win[:0], win[modelSumLen:]...)
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return false, err
		}
	}
	if len(win) < modelSumLen {
		return false, nil
	}
	cut := len(win) - modelSumLen
	h.Write(win[:cut])
	return string(win[cut:]) == "sha256 "+hex.EncodeToString(h.Sum(nil))+"\n", nil
}

// DataFingerprint identifies a data set: its column names and every value,
// bit for bit (SHA-256, hex).
func DataFingerprint(d *Dataset) string {
	h := sha256.New()
	fmt.Fprintf(h, "%q\n", d.Names)
	raw := d.X.RawMatrix()
	var b [8]byte
	for i := 0; i < raw.Rows; i++ {
		for _, v := range raw.Data[i*raw.Stride : i*raw.Stride+raw.Cols] {
			binary.LittleEndian.PutUint64(b[:], math.Float64bits(v))
			h.Write(b[:])
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}
