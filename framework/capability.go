package framework

// Capability checks. A model's optional interfaces (Gradienter, Kerneler,
// Grammer, ShiftBatcher, WarmStarter) are found with the As functions
// below, never with a bare type assertion: a model may have every method
// and say with its Capabilities which ones work, as the plugin transport's
// remote model does (one type for every backend, whatever it can do). This
// is net/http.ResponseController's way with a ResponseWriter's optional
// interfaces, with Capabilities in place of the errors it returns.

// Capable is the optional interface of a model whose method set is wider
// than what it can do: Capabilities says which of its optional interfaces
// work. A model that is not Capable can do exactly what its methods say.
type Capable interface {
	Capabilities() Capabilities
}

// has reports whether m may be used as an optional interface that needs
// the capability want says (nil: none beyond the method set).
func has(m Model, want func(Capabilities) bool) bool {
	c, ok := m.(Capable)
	return !ok || want(c.Capabilities())
}

func gradients(c Capabilities) bool { return c.Gradients }

// AsGradienter returns m as a Gradienter when it is one and, if it is
// Capable, its Capabilities include Gradients.
func AsGradienter(m Model) (Gradienter, bool) {
	g, ok := m.(Gradienter)
	if !ok || !has(m, gradients) {
		return nil, false
	}
	return g, true
}

// AsKerneler returns m as a Kerneler when it is one and, if it is Capable,
// its Capabilities include Kernel.
func AsKerneler(m Model) (Kerneler, bool) {
	k, ok := m.(Kerneler)
	if !ok || !has(m, func(c Capabilities) bool { return c.Kernel }) {
		return nil, false
	}
	return k, true
}

// AsWarmStarter returns m as a WarmStarter when it is one and, if it is
// Capable, its Capabilities include WarmStart.
func AsWarmStarter(m Model) (WarmStarter, bool) {
	w, ok := m.(WarmStarter)
	if !ok || !has(m, func(c Capabilities) bool { return c.WarmStart }) {
		return nil, false
	}
	return w, true
}

// AsGrammer returns m as a Grammer when it is one and, if it is Capable,
// its Capabilities include Gradients (a Grammer is a Gradienter's
// option).
func AsGrammer(m Model) (Grammer, bool) {
	g, ok := m.(Grammer)
	if !ok || !has(m, gradients) {
		return nil, false
	}
	return g, true
}

// AsShiftBatcher returns m as a ShiftBatcher when it is one and, if it is
// Capable, its Capabilities include Gradients (a ShiftBatcher is a
// Gradienter's option).
func AsShiftBatcher(m Model) (ShiftBatcher, bool) {
	b, ok := m.(ShiftBatcher)
	if !ok || !has(m, gradients) {
		return nil, false
	}
	return b, true
}
