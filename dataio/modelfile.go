package dataio

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
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
	// Options are the run's backend options (Config.Options) and
	// Candidates the names of the option settings it chose among
	// (Config.Candidates); each fold says what it chose.
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
	Data  string      `json:"data"`
	Folds []SavedFold `json:"folds"`

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

// ReadModel reads a model file written by WriteModel, checking its magic,
// format version and checksum; name is the file's name for errors, which
// are input errors (a usage error for the CLI).
func ReadModel(r io.Reader, name string) (*SavedModel, error) {
	bad := func(format string, args ...any) error {
		return &InputError{File: name, Msg: fmt.Sprintf(format, args...)}
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read model file %s: %w", name, err)
	}
	if !bytes.HasPrefix(data, []byte(modelMagic)) {
		return nil, bad("not a lazyvi model file (written by vi train)")
	}
	// The checksum line: "sha256 " + 64 hex digits + "\n".
	const sumLen = len("sha256 ") + 64 + 1
	if len(data) < len(modelMagic)+8+sumLen {
		return nil, bad("model file is truncated")
	}
	body, tail := data[:len(data)-sumLen], data[len(data)-sumLen:]
	// One pass over the file: the body's sum, checked against the tail,
	// then the whole file's (FileSum).
	h := sha256.New()
	h.Write(body)
	sum := h.Sum(nil)
	if string(tail) != "sha256 "+hex.EncodeToString(sum)+"\n" {
		return nil, bad("model file is damaged or was modified (checksum mismatch)")
	}
	h.Write(tail)
	var fileSum [sha256.Size]byte
	h.Sum(fileSum[:0])
	rest := body[len(modelMagic):]
	hl := binary.LittleEndian.Uint64(rest[:8])
	rest = rest[8:]
	if hl > maxModelHeader || hl > uint64(len(rest)) {
		return nil, bad("model file header is damaged")
	}
	var m SavedModel
	dec := json.NewDecoder(bytes.NewReader(rest[:hl]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		var probe struct {
			Format int `json:"format"`
		}
		if json.Unmarshal(rest[:hl], &probe) == nil && probe.Format != ModelFileFormat {
			return nil, bad("model file format %d; this lazyvi reads format %d (train the model again with this vi)", probe.Format, ModelFileFormat)
		}
		return nil, bad("model file header: %v", err)
	}
	if m.Format != ModelFileFormat {
		return nil, bad("model file format %d; this lazyvi reads format %d (train the model again with this vi)", m.Format, ModelFileFormat)
	}
	rest = rest[hl:]
	for i := range m.Folds {
		sz := m.Folds[i].Size
		if sz < 0 || sz > len(rest) {
			return nil, bad("model file is truncated (fold %d)", i+1)
		}
		m.Folds[i].Params = rest[:sz:sz]
		rest = rest[sz:]
	}
	m.Source, m.FileSum = name, fileSum
	if len(rest) != 0 {
		return nil, bad("model file has %d bytes after its parameters", len(rest))
	}
	if len(m.Folds) == 0 || (m.CrossFit >= 2 && len(m.Folds) != m.CrossFit) || (m.CrossFit < 2 && len(m.Folds) != 1) {
		return nil, bad("model file holds %d models for crossfit %d", len(m.Folds), m.CrossFit)
	}
	return &m, nil
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
