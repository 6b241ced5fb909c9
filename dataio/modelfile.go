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
	"os"

	"github.com/lazyvi/lazyvi/framework"
)

// ModelFileFormat is the version of the model file layout that WriteModel
// writes and ReadModel reads.
const ModelFileFormat = 2

// modelMagic opens every model file.
const modelMagic = "lazyvi-model\n"

// A SavedModel is the trained full models of a run (one per cross-fitting
// fold and repetition) with everything needed to use them again on the
// same data exactly as the run that trained them would have: the backend
// and its options, the split, the seed, the repetitions, the data's
// fingerprint, the standardisation and the parameters.
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
	// of cross-fitting folds (then each repetition has one model per fold).
	TrainFrac float64 `json:"train_frac,omitempty"`
	CrossFit  int     `json:"crossfit,omitempty"`
	// Repeats is the number of repetitions of the split or the cross-fit,
	// each with its own seed (pipeline.Config.Repeats; absent for one).
	// Folds holds the repetitions in turn: the first repetition's models
	// (PerRepeat of them), then the second's, and so on.
	Repeats int `json:"repeats,omitempty"`
	// Data is the fingerprint of the data the model was trained on
	// (DataFingerprint); a model is used only with the same data.
	Data string `json:"data"`
	// Partition identifies the explicit evaluation rows the models were
	// trained with (pipeline.PartitionSum of Config.Partition; "" for the
	// seeded split or folds); a model is used only with the same.
	Partition string `json:"partition,omitempty"`
	// Choice says how the models' kind was chosen against other kinds
	// (pipeline.Config.Rivals): Backend and Options are the chosen kind's.
	Choice *ModelChoice `json:"model_choice,omitempty"`
	// Prepare says how the data was prepared from its file (Table.Prepare:
	// columns, categorical columns, missing values); nil for a table of
	// numbers used as it is.
	Prepare *PrepareOptions `json:"prepare,omitempty"`
	Folds   []SavedFold     `json:"folds"`

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
	// Fill is the imputation of missing cells that the fold's train rows
	// fitted (Problem.Fill); absent for data without missing cells.
	Fill []float64 `json:"fill,omitempty"`
	// Options are the full model's (Problem.Spec.Options): Config.Options
	// with the chosen candidate's laid over them.
	Options    map[string]string          `json:"options,omitempty"`
	Chosen     string                     `json:"chosen,omitempty"`
	Candidates []framework.CandidateScore `json:"candidates,omitempty"`
	Selection  string                     `json:"selection,omitempty"`
	// Params are the parameters, as WriteModel writes them and ReadModel
	// reads them; LoadModel leaves them in the file (nil) until State
	// reads them. Size and Sum are their length and SHA-256 (hex), which
	// WriteModel sets.
	Params []byte `json:"-"`
	Size   int    `json:"params_bytes"`
	Sum    string `json:"params_sha256"`

	// src and off say where in the file the parameters are when they
	// were left there.
	src paramSource
	off int64
}

// State returns the fold's parameters: Params, or, when the file was read
// without them (LoadModel), its Size bytes read again from the file and
// checked against Sum, so that a file changed since it was read is
// refused. Only one fold's parameters are then in memory at a time.
func (f *SavedFold) State() ([]byte, error) {
	if f.src == nil {
		return f.Params, nil
	}
	b, err := f.src.readAt(f.off, f.Size)
	if err != nil {
		return nil, err
	}
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != f.Sum {
		return nil, &InputError{File: f.src.name(), Msg: "model file changed since it was read (a model's parameters differ)"}
	}
	return b, nil
}

// A paramSource reads a model file's bytes again: n bytes from offset off.
type paramSource interface {
	readAt(off int64, n int) ([]byte, error)
	name() string
}

// pathSource reads the file at its path again.
type pathSource string

func (p pathSource) name() string { return string(p) }

func (p pathSource) readAt(off int64, n int) ([]byte, error) {
	f, err := os.Open(string(p))
	if err != nil {
		return nil, &InputError{File: string(p), Msg: "cannot open again to read a model's parameters: " + unwrapPathError(err).Error()}
	}
	defer f.Close()
	b := make([]byte, n)
	if _, err := f.ReadAt(b, off); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil, &InputError{File: string(p), Msg: "model file changed since it was read (it is shorter)"}
		}
		return nil, fmt.Errorf("read model file %s: %w", p, err)
	}
	return b, nil
}

// WriteModel writes m: the magic line, the header (JSON, one line), each
// fold's parameters (State) as raw bytes, and a last line "sha256 HEX"
// over all that precedes it.
func WriteModel(w io.Writer, m *SavedModel) error {
	m.Format = ModelFileFormat
	params := make([][]byte, len(m.Folds))
	for i := range m.Folds {
		f := &m.Folds[i]
		b, err := f.State()
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		params[i], f.Size, f.Sum = b, len(b), hex.EncodeToString(sum[:])
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
	for _, b := range params {
		bw.Write(b)
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
	return readModel(r, name, nil)
}

// readModel is ReadModel; with src set, the parameters are checked as
// they stream by but left in the file, for State to read again from src.
func readModel(r io.Reader, name string, src paramSource) (*SavedModel, error) {
	mr := &modelReader{r: r, name: name, h: sha256.New()}
	m, head, err := mr.header()
	if err != nil {
		return nil, err
	}
	sums, err := mr.params(m, int64(len(modelMagic)+8+len(head)), src)
	if err != nil {
		return nil, err
	}
	tail, err := io.ReadAll(io.LimitReader(r, int64(modelSumLen)+1))
	if err != nil {
		return nil, fmt.Errorf("read model file %s: %w", name, err)
	}
	if string(tail) != "sha256 "+hex.EncodeToString(mr.h.Sum(nil))+"\n" {
		return nil, mr.damaged()
	}
	mr.h.Write(tail)
	mr.h.Sum(m.FileSum[:0])
	m.Source = name
	for i, f := range m.Folds {
		if f.Sum != sums[i] {
			return nil, mr.bad("model file header declares another checksum of model %d's parameters than they have", i+1)
		}
	}
	if k, reps := m.PerRepeat(), m.Repetitions(); m.CrossFit < 0 || m.Repeats < 0 || len(m.Folds) == 0 || len(m.Folds)%k != 0 || len(m.Folds)/k != reps {
		return nil, mr.bad("model file holds %d models for crossfit %d and %d repetitions", len(m.Folds), m.CrossFit, m.Repeats)
	}
	return m, nil
}

// modelReader reads a model file named name from r, hashing what it reads
// into h.
type modelReader struct {
	r    io.Reader
	name string
	h    hash.Hash
}

func (mr *modelReader) bad(format string, args ...any) error {
	return &InputError{File: mr.name, Msg: fmt.Sprintf(format, args...)}
}

func (mr *modelReader) damaged() error {
	return mr.bad("model file is damaged or was modified (checksum mismatch)")
}

// read reads n bytes (growing its buffer as they come, so that a damaged
// size costs no memory the file does not fill) into the hash.
func (mr *modelReader) read(n uint64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(mr.r, int64(n)))
	if err != nil {
		return nil, fmt.Errorf("read model file %s: %w", mr.name, err)
	}
	mr.h.Write(b)
	return b, nil
}

// header reads the magic, the header's size and the header, and returns
// the model it describes and the header's bytes. A header of another
// format, or a damaged one, is told apart by the checksum over the rest
// of the file.
func (mr *modelReader) header() (*SavedModel, []byte, error) {
	magic, err := mr.read(uint64(len(modelMagic)))
	if err != nil {
		return nil, nil, err
	}
	if string(magic) != modelMagic {
		return nil, nil, mr.bad("not a lazyvi model file (written by vi train)")
	}
	size, err := mr.read(8)
	if err != nil {
		return nil, nil, err
	}
	if len(size) < 8 {
		return nil, nil, mr.bad("model file is truncated")
	}
	hl := binary.LittleEndian.Uint64(size)
	if hl > maxModelHeader {
		return nil, nil, mr.bad("model file header is damaged (it declares %d bytes)", hl)
	}
	head, err := mr.read(hl)
	if err != nil {
		return nil, nil, err
	}
	if uint64(len(head)) < hl {
		return nil, nil, mr.bad("model file is damaged or was modified (truncated in its header)")
	}
	var m SavedModel
	dec := json.NewDecoder(bytes.NewReader(head))
	dec.DisallowUnknownFields()
	headErr := dec.Decode(&m)
	if _, sizesOK := paramsSize(m.Folds); headErr == nil && m.Format == ModelFileFormat && sizesOK {
		return &m, head, nil
	}
	if ok, err := restMatchesSum(mr.r, mr.h); err != nil {
		return nil, nil, fmt.Errorf("read model file %s: %w", mr.name, err)
	} else if !ok {
		return nil, nil, mr.damaged()
	}
	var probe struct {
		Format int `json:"format"`
	}
	if json.Unmarshal(head, &probe) == nil && probe.Format != ModelFileFormat {
		return nil, nil, mr.bad("model file format %d; this lazyvi reads format %d (train the model again with this vi)", probe.Format, ModelFileFormat)
	}
	if headErr != nil {
		return nil, nil, mr.bad("model file header: %v", headErr)
	}
	return nil, nil, mr.bad("model file header declares parameter sizes that do not add up")
}

// params reads each fold's parameters, the first at offset off in the
// file, hashed as they stream by: kept in memory, or (src) only their
// place in the file. It returns each fold's checksum.
func (mr *modelReader) params(m *SavedModel, off int64, src paramSource) ([]string, error) {
	sums := make([]string, len(m.Folds))
	for i := range m.Folds {
		f := &m.Folds[i]
		fh := sha256.New()
		var got int64
		if src == nil {
			b, err := mr.read(uint64(f.Size))
			if err != nil {
				return nil, err
			}
			fh.Write(b)
			f.Params, got = b, int64(len(b))
		} else {
			var err error
			if got, err = io.Copy(io.MultiWriter(mr.h, fh), io.LimitReader(mr.r, int64(f.Size))); err != nil {
				return nil, fmt.Errorf("read model file %s: %w", mr.name, err)
			}
			f.src, f.off = src, off
		}
		if got < int64(f.Size) {
			return nil, mr.bad("model file is damaged or was modified (truncated in its parameters)")
		}
		sums[i], off = hex.EncodeToString(fh.Sum(nil)), off+got
	}
	return sums, nil
}

// Models says how many models the file holds and how they divide:
// "1 model", "3 models (one per fold)", "3 models (one per repetition)"
// or "9 models: 3 repetitions of 3 folds".
func (m *SavedModel) Models() string {
	switch k, r := m.PerRepeat(), m.Repetitions(); {
	case k > 1 && r > 1:
		return fmt.Sprintf("%d models: %d repetitions of %d folds", k*r, r, k)
	case k > 1:
		return fmt.Sprintf("%d models (one per fold)", k)
	case r > 1:
		return fmt.Sprintf("%d models (one per repetition)", r)
	}
	return "1 model"
}

// PerRepeat is the number of models of one repetition: CrossFit's folds,
// or one for a single split.
func (m *SavedModel) PerRepeat() int {
	if m.CrossFit >= 2 {
		return m.CrossFit
	}
	return 1
}

// Repetitions is the number of repetitions the file holds (Repeats; one
// when absent).
func (m *SavedModel) Repetitions() int {
	return max(m.Repeats, 1)
}

// ReadModelFile reads the model file of vi train at path (LoadModel),
// checking that a lazyvi speaking backend protocol version protocol can
// use it; standard input ("-") and a missing file are input errors that
// say what to give instead.
func ReadModelFile(ctx context.Context, path string, protocol int) (*SavedModel, error) {
	if path == "-" {
		return nil, &InputError{File: path, Msg: "a model file is read by its name, not from standard input: give the file vi train wrote"}
	}
	if _, err := os.Stat(path); os.IsNotExist(err) {
		return nil, &InputError{File: path, Msg: "no such model file"}
	}
	m, err := LoadModel(ctx, path)
	if err != nil {
		return nil, err
	}
	if m.Protocol != protocol {
		return nil, &InputError{File: path, Msg: fmt.Sprintf("the model was written by a lazyvi speaking backend protocol version %d; this one speaks version %d: train it again with this vi", m.Protocol, protocol)}
	}
	return m, nil
}

// LoadModel reads the model file at path (ReadModel), returning as soon as
// ctx is done even while the file blocks (a FIFO without a writer). The
// parameters of a regular file are checked but left in it: each fold's
// State reads its own again when it is used, so that a run holds one
// model's parameters at a time, not every repetition's.
func LoadModel(ctx context.Context, path string) (*SavedModel, error) {
	read := ReadModel
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() && path != Stdin {
		read = func(r io.Reader, name string) (*SavedModel, error) { return readModel(r, name, pathSource(path)) }
	}
	return LoadFile(ctx, path, read)
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
