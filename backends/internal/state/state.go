// Package state encodes the fitted state of the built-in backends' models
// for framework.Persister: a header naming the backend and the version of
// its state layout, then the backend's state struct in encoding/gob (which
// keeps every float64 bit for bit).
package state

import (
	"bytes"
	"encoding/gob"
	"fmt"

	"github.com/lazyvi/lazyvi/framework"
)

// header opens every state.
type header struct {
	Backend string
	Version int
}

// Encode returns v's encoding as the state of backend at layout version.
func Encode(backend string, version int, v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := gob.NewEncoder(&buf)
	if err := enc.Encode(header{Backend: backend, Version: version}); err != nil {
		return nil, fmt.Errorf("%s: save state: %w", backend, err)
	}
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("%s: save state: %w", backend, err)
	}
	return buf.Bytes(), nil
}

// Decode reads a state that Encode wrote for backend at version into v.
// A state of another backend or version, or a damaged one, is an error
// wrapping framework.ErrUsage.
func Decode(backend string, version int, b []byte, v any) error {
	dec := gob.NewDecoder(bytes.NewReader(b))
	var h header
	if err := dec.Decode(&h); err != nil {
		return framework.Usagef("%s: load state: not a model state (%v)", backend, err)
	}
	if h.Backend != backend {
		return framework.Usagef("%s: load state: the state is of backend %q", backend, h.Backend)
	}
	if h.Version != version {
		return framework.Usagef("%s: load state: state layout version %d, this lazyvi reads %d (train the model again)", backend, h.Version, version)
	}
	if err := dec.Decode(v); err != nil {
		return framework.Usagef("%s: load state: %v", backend, err)
	}
	return nil
}

// CheckLen returns a usage error unless a saved vector has the length the
// model's architecture needs.
func CheckLen(backend, what string, got, want int) error {
	if got != want {
		return framework.Usagef("%s: load state: %d %s, this model's architecture has %d (other options?)", backend, got, what, want)
	}
	return nil
}
