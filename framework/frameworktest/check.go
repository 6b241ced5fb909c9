package frameworktest

import (
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/lazyvi/lazyvi/framework"
)

// tb is what the checks use of a test: a test's reports, cleanups and
// subtests. TestBackend runs them on its TB (testT), Check on a recorder.
type tb interface {
	Helper()
	Error(args ...any)
	Errorf(format string, args ...any)
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	Cleanup(f func())
	// run runs f as the subtest name and reports whether it passed.
	run(name string, f func(t tb)) bool
}

// TB is what TestBackend and TestEquivalent need of a test, T being the
// type its subtests get: *testing.T is a TB[*testing.T], so a test passes
// its t as it is. The kit names no type of package testing, so that a
// program may link it (Check) without linking the test framework.
type TB[T any] interface {
	Helper()
	Error(args ...any)
	Errorf(format string, args ...any)
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	Cleanup(f func())
	Run(name string, f func(t T)) bool
}

// testT is a TB as a tb.
type testT[T TB[T]] struct{ TB[T] }

func (t testT[T]) run(name string, f func(t tb)) bool {
	return t.TB.Run(name, func(s T) { f(testT[T]{s}) })
}

// Check runs the conformance checks of TestBackend on b outside a test (in
// a program, or an example) and returns the failures, one line each naming
// its check ("Deterministic: ..."), joined; nil when b conforms.
func Check(b framework.Backend, opts ...Option) error {
	r := &recorder{failures: &failures{}}
	r.do(func() { checkBackend(r, b, opts) })
	return errors.Join(r.failures.errs...)
}

// failures are a Check's failures, from all its checks.
type failures struct {
	mu   sync.Mutex
	errs []error
}

// recorder is a tb that records failures: Fatal ends its check (the
// goroutine, as in package testing), Error does not.
type recorder struct {
	name     string // the check's path: "Plugin/Gradients/regression"
	failures *failures

	mu       sync.Mutex
	failed   bool
	cleanups []func()
}

func (r *recorder) Helper() {}

func (r *recorder) Error(args ...any) { r.fail(fmt.Sprint(args...)) }

func (r *recorder) Errorf(format string, args ...any) { r.fail(fmt.Sprintf(format, args...)) }

func (r *recorder) Fatal(args ...any) {
	r.fail(fmt.Sprint(args...))
	runtime.Goexit()
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.fail(fmt.Sprintf(format, args...))
	runtime.Goexit()
}

func (r *recorder) Cleanup(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cleanups = append(r.cleanups, f)
}

func (r *recorder) fail(msg string) {
	r.mu.Lock()
	r.failed = true
	r.mu.Unlock()
	err := errors.New(msg)
	if r.name != "" {
		err = fmt.Errorf("%s: %s", r.name, msg)
	}
	r.failures.mu.Lock()
	defer r.failures.mu.Unlock()
	r.failures.errs = append(r.failures.errs, err)
}

func (r *recorder) run(name string, f func(t tb)) bool {
	sub := &recorder{name: name, failures: r.failures}
	if r.name != "" {
		sub.name = r.name + "/" + name
	}
	sub.do(func() { f(sub) })
	if sub.failed {
		r.mu.Lock()
		r.failed = true
		r.mu.Unlock()
	}
	return !sub.failed
}

// do runs f in a goroutine of its own, so that Fatal can end it, then the
// cleanups, last registered first.
func (r *recorder) do(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			for i := len(r.cleanups) - 1; i >= 0; i-- {
				r.cleanups[i]()
			}
		}()
		f()
	}()
	<-done
}
