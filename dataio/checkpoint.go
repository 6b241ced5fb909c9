package dataio

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/lazyvi/lazyvi/framework"
	"gonum.org/v1/gonum/mat"
)

// FileCheckpoint is a Checkpoint in a file of JSON lines: a header with the
// run's fingerprint, then one finished reduction a line, each written and
// synced as it finishes. Reopening the file with the same fingerprint
// resumes; a different fingerprint (other data or settings) starts afresh;
// a file that is no checkpoint is refused, and left as it is.
type FileCheckpoint struct {
	path string

	mu sync.Mutex
	f  *os.File
	// done holds the reductions read from the file, for Load; keys names
	// every reduction the file holds, those saved since included (whose
	// predictions the run has, so they are not kept twice).
	done map[string]checkpointEntry
	keys map[string]struct{}
	// stale is the format version of the file found at path when it was
	// another than checkpointVersion (its entries dropped), 0 otherwise.
	stale int
	// other: the file found at path was a checkpoint of another run
	// (another fingerprint), replaced.
	other bool
}

// maxCheckpointHeader bounds a checkpoint's first line (its header, some
// 100 bytes) as OpenCheckpoint reads it to tell a checkpoint.
const maxCheckpointHeader = 4096

// checkpointVersion is the version of the file's format; a file of another
// version starts afresh. Version 2 keeps a reduction's Stats generically
// (version 1 had lazy's lambda and no_update); version 3 its Carry too (a
// version 2 file's baselines have none, and the features resumed from
// them would be solved otherwise than a fresh run's); version 4 its Draws
// (permute's other permutations).
const checkpointVersion = 4

type checkpointHeader struct {
	Version     int    `json:"lazyvi_checkpoint"`
	Fingerprint string `json:"fingerprint"`
}

type checkpointEntry struct {
	Key     string  `json:"key"`
	Seconds float64 `json:"seconds"`
	// Stats are Reduced.Stats as strconv writes them (JSON has no
	// infinities).
	Stats map[string]string `json:"stats,omitempty"`
	Rows  int               `json:"rows"`
	Cols  int               `json:"cols"`
	Pred  []float64         `json:"pred"`
	// Carry is Reduced.Carry (a baseline's, for its reductions).
	Carry []float64 `json:"carry,omitempty"`
	// Draws are Reduced.Draws, each rows x cols, row-major.
	Draws [][]float64 `json:"draws,omitempty"`
}

// OpenCheckpoint opens (or creates) the checkpoint file at path for a run
// with the given fingerprint and returns it with the number of reductions
// it already holds. Entries of another fingerprint, and a last line cut
// short by a crash, are dropped: the file is rewritten (atomically) with
// what is kept before new entries are appended.
func OpenCheckpoint(path, fingerprint string) (*FileCheckpoint, int, error) {
	c := &FileCheckpoint{path: path, done: map[string]checkpointEntry{}, keys: map[string]struct{}{}}
	var kept []checkpointEntry
	if f, err := os.Open(path); err == nil {
		// Only a lazyvi checkpoint, told by its first line (read no
		// further than maxCheckpointHeader), is resumed from or replaced:
		// another file of that name is someone's, and is left alone.
		br := bufio.NewReaderSize(f, maxCheckpointHeader)
		line, _ := br.ReadSlice('\n')
		var h checkpointHeader
		if json.Unmarshal(line, &h) != nil || h.Version <= 0 {
			f.Close()
			return nil, 0, &InputError{File: path, Msg: "exists and is not a lazyvi checkpoint: it is left as it is (move it away, or write the output elsewhere)"}
		}
		if h.Version != checkpointVersion {
			c.stale = h.Version
		}
		c.other = h.Version == checkpointVersion && h.Fingerprint != fingerprint
		if h.Version == checkpointVersion && h.Fingerprint == fingerprint {
			sc := bufio.NewScanner(br)
			sc.Buffer(make([]byte, 1<<20), 1<<30)
			for sc.Scan() {
				var e checkpointEntry
				if json.Unmarshal(sc.Bytes(), &e) != nil || e.Rows*e.Cols != len(e.Pred) {
					break // cut short: keep what came before
				}
				c.done[e.Key] = e
				c.keys[e.Key] = struct{}{}
				kept = append(kept, e)
			}
		}
		f.Close()
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, 0, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	// Rewrite what is kept, then append from there.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	if err := enc.Encode(checkpointHeader{Version: checkpointVersion, Fingerprint: fingerprint}); err != nil {
		return nil, 0, err
	}
	for _, e := range kept {
		if err := enc.Encode(e); err != nil {
			return nil, 0, err
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return nil, 0, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return nil, 0, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return nil, 0, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return nil, 0, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	c.f = tmp // now at path, positioned at its end
	return c, len(kept), nil
}

// StaleVersion returns the format version of the checkpoint file that
// OpenCheckpoint found at its path when that was another version than the
// one it writes (a file of an older vi, whose entries it dropped: the run
// starts afresh), 0 otherwise; a caller says so, since a file that the
// same command would otherwise have resumed from is replaced.
func (c *FileCheckpoint) StaleVersion() int { return c.stale }

// OtherRun reports whether the checkpoint file that OpenCheckpoint found
// at its path was one of another run (other data or settings), whose
// entries it dropped: a caller says so, as for StaleVersion.
func (c *FileCheckpoint) OtherRun() bool { return c.other }

// Load returns the reduction saved under key.
func (c *FileCheckpoint) Load(key string) (framework.Reduced, float64, bool) {
	c.mu.Lock()
	e, ok := c.done[key]
	c.mu.Unlock()
	if !ok {
		return framework.Reduced{}, 0, false
	}
	r := framework.Reduced{Pred: mat.NewDense(e.Rows, e.Cols, append([]float64(nil), e.Pred...)), Carry: e.Carry}
	for _, d := range e.Draws {
		if len(d) != e.Rows*e.Cols {
			return framework.Reduced{}, 0, false // not written by Save: fit afresh
		}
		r.Draws = append(r.Draws, mat.NewDense(e.Rows, e.Cols, append([]float64(nil), d...)))
	}
	for k, s := range e.Stats {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return framework.Reduced{}, 0, false // not written by Save: fit afresh
		}
		if r.Stats == nil {
			r.Stats = map[string]float64{}
		}
		r.Stats[k] = v
	}
	return r, e.Seconds, true
}

// Save appends a finished reduction and syncs the file.
func (c *FileCheckpoint) Save(key string, r framework.Reduced, seconds float64) error {
	rows, cols := r.Pred.Dims()
	e := checkpointEntry{Key: key, Seconds: seconds, Rows: rows, Cols: cols, Pred: rowMajor(r.Pred), Carry: r.Carry}
	for _, d := range r.Draws {
		e.Draws = append(e.Draws, rowMajor(d))
	}
	for k, v := range r.Stats {
		if e.Stats == nil {
			e.Stats = map[string]string{}
		}
		e.Stats[k] = strconv.FormatFloat(v, 'g', -1, 64)
	}
	line, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("checkpoint %s: %w", c.path, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := c.f.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("checkpoint %s: %w", c.path, err)
	}
	if err := c.f.Sync(); err != nil {
		return fmt.Errorf("checkpoint %s: %w", c.path, err)
	}
	c.keys[key] = struct{}{}
	return nil
}

// Len returns the number of reductions the checkpoint holds.
func (c *FileCheckpoint) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.keys)
}

// Close closes the file and keeps it, for a later run to resume from.
func (c *FileCheckpoint) Close() error { return c.f.Close() }

// Remove closes and deletes the file, once the run it served has finished.
func (c *FileCheckpoint) Remove() error {
	c.f.Close()
	if err := os.Remove(c.path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// Finish ends the run the checkpoint served, which failed with runErr
// (nil: it succeeded), and returns the run's error: after a failure that
// running the same command again can get past (an interrupt, a backend
// that died) it keeps the file when it holds anything and says so in the
// error; after a success, after a failure that the same command would meet
// again (bad input or settings, a non-finite result: framework.ErrUsage,
// framework.ErrNonFinite), and when there is nothing to keep, it removes
// the file. A nil checkpoint (a run without one) returns runErr.
func (c *FileCheckpoint) Finish(runErr error) error {
	if c == nil {
		return runErr
	}
	if runErr != nil {
		if n := c.Len(); n > 0 && resumable(runErr) {
			c.Close()
			return fmt.Errorf("%w (%d finished reduced models are kept in %s: the same command resumes from them)", runErr, n, c.path)
		}
		c.Remove()
		return runErr
	}
	return c.Remove()
}

// resumable reports whether running the same command again, from the
// checkpoint, could succeed where err failed: not for bad input or
// settings and not for a non-finite result, which come back the same.
func resumable(err error) bool {
	return !errors.Is(err, framework.ErrUsage) && !errors.Is(err, framework.ErrNonFinite)
}

// rowMajor returns the entries of m row by row.
func rowMajor(m *mat.Dense) []float64 {
	rows, cols := m.Dims()
	out := make([]float64, 0, rows*cols)
	for i := 0; i < rows; i++ {
		for j := 0; j < cols; j++ {
			out = append(out, m.At(i, j))
		}
	}
	return out
}
