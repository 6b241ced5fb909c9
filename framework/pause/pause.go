// Package pause lets long work give its core to more urgent work: a
// scheduler sets a pause function on a context (With), and the work calls
// Point between its steps. A backend whose fits do so says it with Pauser.
package pause

import "context"

// key is the context key of With's function.
type key struct{}

// With returns a copy of ctx that carries pause, the function Point
// calls. A scheduler sets it on work it runs ahead of need on a core
// nothing else wants (a later repetition's models, trained while the
// first one's last fit runs alone): pause gives the core back while more
// urgent work waits for one and returns once the work may go on, or with
// ctx's error where ctx ends first.
func With(ctx context.Context, pause func(context.Context) error) context.Context {
	return context.WithValue(ctx, key{}, pause)
}

// Point is where long work (a backend's training, between its steps) may
// wait for more urgent work to take the core it runs on: it calls the
// function With set on ctx, if any, and returns ctx's error, nil while ctx
// is live. Work that calls it between its steps stops early when ctx ends,
// as it would on ctx.Err, and yields its core where the caller asked;
// what it computes does not depend on the pauses.
func Point(ctx context.Context) error {
	if pause, ok := ctx.Value(key{}).(func(context.Context) error); ok {
		if err := pause(ctx); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// Pauser is the optional interface of a framework.Backend whose models'
// fits call Point between their steps, on the goroutine that called Fit:
// a scheduler may then run such fits ahead of need, on a core nothing
// else wants, and have it back within a few steps. PausesFits does
// nothing.
type Pauser interface {
	PausesFits()
}
