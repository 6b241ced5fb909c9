package dataio

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/lazyvi/lazyvi/framework"
)

// Stdin is the path that names standard input to LoadCSV and LoadGroups.
const Stdin = "-"

// stdinSource names standard input in messages.
const stdinSource = "standard input"

// LoadFile opens path (Stdin: standard input) and reads it with read,
// returning as soon as ctx is done even when the operating system blocks
// the open or a read (a FIFO without a writer, a terminal, a pipe whose
// writer is idle): the open and the reads run in a goroutine, which stops
// at its next read or, for a file that can be interrupted (pipes, FIFOs),
// at once, when the file is closed; a read blocked in the kernel on
// standard input goes on until it returns, which is harmless in a process
// that then exits. Failures to open are *InputErrors naming path.
func LoadFile[T any](ctx context.Context, path string, read func(io.Reader, string) (T, error)) (T, error) {
	source := path
	if path == Stdin {
		source = stdinSource
	}
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := openAndRead(ctx, path, source, read)
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		if r.err != nil && ctx.Err() != nil {
			break // the read failed because it was stopped
		}
		return r.v, r.err
	case <-ctx.Done():
	}
	var zero T
	return zero, fmt.Errorf("%s: reading interrupted: %w", source, context.Cause(ctx))
}

func openAndRead[T any](ctx context.Context, path, source string, read func(io.Reader, string) (T, error)) (T, error) {
	var zero T
	if path == Stdin {
		return read(ctxReader{ctx, os.Stdin}, source)
	}
	f, err := openInput(path)
	if err != nil {
		return zero, err
	}
	defer f.Close()
	if ctx.Err() != nil { // cancelled while the open blocked
		return zero, context.Cause(ctx)
	}
	stop := context.AfterFunc(ctx, func() { f.Close() }) // ends a pending read on a pipe or FIFO
	defer stop()
	return read(ctxReader{ctx, f}, source)
}

// openInput opens an input file; a failure is an *InputError naming it.
func openInput(path string) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		msg := "cannot open: " + unwrapPathError(err).Error()
		if errors.Is(err, fs.ErrNotExist) {
			msg = "no such file"
		}
		return nil, &InputError{File: path, Msg: msg}
	}
	return f, nil
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// ctxReader stops reading once its context is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, context.Cause(c.ctx)
	}
	return c.r.Read(p)
}

// textReader returns r without a leading UTF-8 byte order mark (Excel and
// R write one) and with every carriage return that does not start a CRLF
// pair turned into a line feed, so that files with the line ends of classic
// Mac OS (CR only) read as lines. CRLF pairs are left as they are.
func textReader(r io.Reader) io.Reader {
	br := bufio.NewReaderSize(r, 64*1024)
	if b, err := br.Peek(3); err == nil && string(b) == "\ufeff" {
		br.Discard(3)
	}
	return &crReader{r: br}
}

// crReader turns lone carriage returns into line feeds; see textReader.
type crReader struct{ r *bufio.Reader }

func (c *crReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	for i := 0; i < n; i++ {
		if p[i] != '\r' {
			continue
		}
		if i+1 < n {
			if p[i+1] != '\n' {
				p[i] = '\n'
			}
			continue
		}
		// The last byte read: look at the next one.
		if b, perr := c.r.Peek(1); perr != nil || b[0] != '\n' {
			p[i] = '\n'
		}
	}
	return n, err
}

// trimField trims white space and zero-width no-break spaces (U+FEFF, the
// byte order mark, which editors hide) from both ends of a field, a name or
// a line.
func trimField(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) || r == '\ufeff' })
}

// maxQuoted is how long a bad cell or line may be, quoted, in an error
// message.
const maxQuoted = 66

// Quote is strconv.Quote of s, cut (at a rune boundary) so that the quoted
// text is at most maxQuoted bytes long, with the full length said, so that
// a huge bad cell (or one whose every byte needs an escape) does not flood
// the message.
func Quote(s string) string {
	q := strconv.Quote(s)
	if len(q) <= maxQuoted {
		return q
	}
	cut := min(len(s), maxQuoted)
	for {
		for cut > 0 && cut < len(s) && !utf8.RuneStart(s[cut]) {
			cut--
		}
		if q = strconv.Quote(s[:cut]); len(q) <= maxQuoted || cut == 0 {
			return fmt.Sprintf("%s... (%d bytes)", q, len(s))
		}
		cut--
	}
}

// InputError locates bad input: the file and, where they apply, the 1-based
// row (counting the header as row 1) and the column name.
type InputError struct {
	File   string
	Row    int    // 0 when not applicable
	Column string // "" when not applicable
	Msg    string
	// Err, when set, is what kind of bad input it is, for errors.Is (a
	// sentinel such as pipeline.ErrTooFewSplitRows); Msg says it.
	Err error
}

// Unwrap returns Err.
func (e *InputError) Unwrap() error { return e.Err }

func (e *InputError) Error() string {
	s := e.File
	if e.Row > 0 {
		s += fmt.Sprintf(": row %d", e.Row)
	}
	if e.Column != "" {
		s += ", column " + Quote(e.Column)
	}
	return s + ": " + e.Msg
}

// Is makes every InputError match ErrUsage.
func (e *InputError) Is(target error) bool { return target == framework.ErrUsage }
