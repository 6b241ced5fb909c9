package framework

// Capability checks. A model's optional interfaces (Gradienter, Kerneler,
// Grammer, ShiftBatcher, WarmStarter, WarmStopper, JacobianMultiplier,
// SinglePrecisioner, SingleKerneler) are found with the As functions
// below, never with a bare type assertion: a model may have every method and say with its
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

// as returns m as a T when it is one and, if it is Capable, its
// Capabilities satisfy want.
func as[T any](m Model, want func(Capabilities) bool) (T, bool) {
	t, ok := m.(T)
	if !ok {
		return t, false
	}
	if c, ok := m.(Capable); ok && !want(c.Capabilities()) {
		var zero T
		return zero, false
	}
	return t, true
}

func gradients(c Capabilities) bool { return c.Gradients }

// AsGradienter returns m as a Gradienter when it is one and, if it is
// Capable, its Capabilities include Gradients.
func AsGradienter(m Model) (Gradienter, bool) { return as[Gradienter](m, gradients) }

// AsKerneler returns m as a Kerneler when it is one and, if it is Capable,
// its Capabilities include Kernel.
func AsKerneler(m Model) (Kerneler, bool) {
	return as[Kerneler](m, func(c Capabilities) bool { return c.Kernel })
}

// AsWarmStarter returns m as a WarmStarter when it is one and, if it is
// Capable, its Capabilities include WarmStart.
func AsWarmStarter(m Model) (WarmStarter, bool) {
	return as[WarmStarter](m, func(c Capabilities) bool { return c.WarmStart })
}

// AsWarmStopper returns m as a WarmStopper when it is one and, if it is
// Capable, its Capabilities include WarmStart and WarmStop.
func AsWarmStopper(m Model) (WarmStopper, bool) {
	return as[WarmStopper](m, func(c Capabilities) bool { return c.WarmStart && c.WarmStop })
}

// AsPersister returns m as a Persister when it is one and, if it is
// Capable, its Capabilities include Persist.
func AsPersister(m Model) (Persister, bool) {
	return as[Persister](m, func(c Capabilities) bool { return c.Persist })
}

// AsGrammer returns m as a Grammer when it is one and, if it is Capable,
// its Capabilities include Gradients (a Grammer is a Gradienter's
// option).
func AsGrammer(m Model) (Grammer, bool) { return as[Grammer](m, gradients) }

// AsShiftBatcher returns m as a ShiftBatcher when it is one and, if it is
// Capable, its Capabilities include Gradients (a ShiftBatcher is a
// Gradienter's option).
func AsShiftBatcher(m Model) (ShiftBatcher, bool) { return as[ShiftBatcher](m, gradients) }

// AsJacobianMultiplier returns m as a JacobianMultiplier when it is one and,
// if it is Capable, its Capabilities include MatrixFree.
func AsJacobianMultiplier(m Model) (JacobianMultiplier, bool) {
	return as[JacobianMultiplier](m, func(c Capabilities) bool { return c.Gradients && c.MatrixFree })
}

// MultiplierOf is AsJacobianMultiplier with the precision chosen: with
// single, the products of m's SinglePrecision when it is a
// SinglePrecisioner (AsSinglePrecisioner), else m's own.
func MultiplierOf(m Model, single bool) (JacobianMultiplier, bool) {
	jm, ok := AsJacobianMultiplier(m)
	if !ok || !single {
		return jm, ok
	}
	if sp, ok := AsSinglePrecisioner(m); ok {
		return sp.SinglePrecision(), true
	}
	return jm, true
}

// AsPreparedPredictor returns m as a PreparedPredictor when it is one and,
// if it is Capable, its Capabilities include MatrixFree and Gradients (a
// PreparedPredictor is a JacobianMultiplier's option).
func AsPreparedPredictor(m Model) (PreparedPredictor, bool) {
	return as[PreparedPredictor](m, func(c Capabilities) bool { return c.Gradients && c.MatrixFree })
}

// AsSinglePrecisioner returns m as a SinglePrecisioner when it is one and,
// if it is Capable, its Capabilities include SinglePrecision (with
// MatrixFree and Gradients: a SinglePrecisioner is a JacobianMultiplier's
// option).
func AsSinglePrecisioner(m Model) (SinglePrecisioner, bool) {
	return as[SinglePrecisioner](m, func(c Capabilities) bool { return c.Gradients && c.MatrixFree && c.SinglePrecision })
}

// AsSingleKerneler returns m as a SingleKerneler when it is one and, if it
// is Capable, its Capabilities include SingleKernel (with Kernel and
// Gradients: a SingleKerneler is a Kerneler's option).
func AsSingleKerneler(m Model) (SingleKerneler, bool) {
	return as[SingleKerneler](m, func(c Capabilities) bool { return c.Gradients && c.Kernel && c.SingleKernel })
}

// KernelerOf is AsKerneler with the precision chosen: with single, the
// Kerneler of m's SingleKernel when it is a SingleKerneler
// (AsSingleKerneler), else m's own.
func KernelerOf(m Model, single bool) (Kerneler, bool) {
	k, ok := AsKerneler(m)
	if !ok || !single {
		return k, ok
	}
	if sk, ok := AsSingleKerneler(m); ok {
		return sk.SingleKernel(), true
	}
	return k, true
}
