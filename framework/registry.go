package framework

import (
	"fmt"
	"sort"
	"sync"
)

// registry is a name -> value table guarded by a mutex, in the manner of
// database/sql's driver registry.
type registry[T any] struct {
	kind string
	mu   sync.RWMutex
	m    map[string]T
}

func (r *registry[T]) register(name string, v T, isNil bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if isNil {
		panic("framework: Register " + r.kind + " " + name + " is nil")
	}
	if r.m == nil {
		r.m = make(map[string]T)
	}
	if _, dup := r.m[name]; dup {
		panic("framework: Register called twice for " + r.kind + " " + name)
	}
	r.m[name] = v
}

func (r *registry[T]) lookup(name string) (T, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	v, ok := r.m[name]
	if !ok {
		var zero T
		return zero, Usagef("unknown %s %q (registered: %v)", r.kind, name, r.namesLocked())
	}
	return v, nil
}

func (r *registry[T]) names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.namesLocked()
}

func (r *registry[T]) namesLocked() []string {
	out := make([]string, 0, len(r.m))
	for k := range r.m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

var (
	backends   = &registry[Backend]{kind: "backend"}
	estimators = &registry[Estimator]{kind: "estimator"}
	measures   = &registry[Measure]{kind: "measure"}
)

// RegisterBackend makes a backend available by name. It panics if b is nil or
// the name is taken.
func RegisterBackend(name string, b Backend) { backends.register(name, b, b == nil) }

// RegisterEstimator makes an estimator available by its Name.
func RegisterEstimator(e Estimator) {
	if e == nil {
		panic("framework: RegisterEstimator: nil estimator")
	}
	estimators.register(e.Name(), e, false)
}

// RegisterMeasure makes a measure available by its Name.
func RegisterMeasure(m Measure) {
	if m == nil {
		panic("framework: RegisterMeasure: nil measure")
	}
	measures.register(m.Name(), m, false)
}

// LookupBackend returns the registered backend; an unknown name is a usage
// error listing the registered ones.
func LookupBackend(name string) (Backend, error) { return backends.lookup(name) }

// LookupEstimator returns the registered estimator.
func LookupEstimator(name string) (Estimator, error) { return estimators.lookup(name) }

// LookupMeasure returns the registered measure.
func LookupMeasure(name string) (Measure, error) { return measures.lookup(name) }

// Backends returns the sorted names of the registered backends.
func Backends() []string { return backends.names() }

// Estimators returns the sorted names of the registered estimators.
func Estimators() []string { return estimators.names() }

// Measures returns the sorted names of the registered measures.
func Measures() []string { return measures.names() }

// String for diagnostics.
func (t Capabilities) String() string {
	return fmt.Sprintf("gradients=%t kernel=%t classification=%t multiclass=%t warmstart=%t",
		t.Gradients, t.Kernel, t.Classification, t.Multiclass, t.WarmStart)
}
