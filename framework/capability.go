package framework

// Capability checks. A model's optional interfaces (Gradienter, Kerneler,
// GramBuilder, ShiftBatcher, WarmStarter, WarmStopper, JacobianMultiplier,
// SinglePrecisioner, SingleKerneler, ...) are found with As, never with a
// bare type assertion: a model may have every method and say with its
// Capabilities which ones work, as the plugin transport's remote model
// does (one type for every backend, whatever it can do). This is
// net/http.ResponseController's way with a ResponseWriter's optional
// interfaces, with Capabilities in place of the errors it returns.

// Capable is the optional interface of a model whose method set is wider
// than what it can do: Capabilities says which of its optional interfaces
// work. A model that is not Capable can do exactly what its methods say.
type Capable interface {
	Capabilities() Capabilities
}

// As returns m as a T, one of a model's optional interfaces, when m
// implements T and, if m is Capable, its Capabilities say that T works:
//
//	T                   Capabilities it needs
//	Gradienter          Gradients
//	GramBuilder         Gradients
//	ShiftBatcher        Gradients
//	Kerneler            Kernel
//	SingleKerneler      Gradients, Kernel, SingleKernel
//	JacobianMultiplier  Gradients, MatrixFree
//	PreparedPredictor   Gradients, MatrixFree
//	SinglePrecisioner   Gradients, MatrixFree, SinglePrecision
//	WarmStarter         WarmStart
//	WarmStopper         WarmStart, WarmStop
//	Persister           Persist
//
// For any other T (Forgetter, FitReporter, Tuner, ...) it is m.(T).
func As[T any](m Model) (T, bool) {
	t, ok := m.(T)
	if !ok {
		return t, false
	}
	if c, ok := m.(Capable); ok && !works[T](c.Capabilities()) {
		var zero T
		return zero, false
	}
	return t, true
}

// works reports whether c says that the optional interface T works (see
// As).
func works[T any](c Capabilities) bool {
	switch any((*T)(nil)).(type) {
	case *Gradienter, *GramBuilder, *ShiftBatcher:
		return c.Gradients
	case *Kerneler:
		return c.Kernel
	case *SingleKerneler:
		return c.Gradients && c.Kernel && c.SingleKernel
	case *JacobianMultiplier, *PreparedPredictor:
		return c.Gradients && c.MatrixFree
	case *SinglePrecisioner:
		return c.Gradients && c.MatrixFree && c.SinglePrecision
	case *WarmStarter:
		return c.WarmStart
	case *WarmStopper:
		return c.WarmStart && c.WarmStop
	case *Persister:
		return c.Persist
	}
	return true
}
