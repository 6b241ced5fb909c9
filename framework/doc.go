// Package framework holds the core of lazyvi: the small interfaces through which
// estimators reach models (Model, Gradienter, Kerneler), the estimators'
// interface and the Problem they share (Estimator, Problem, Reduced), the
// predictiveness measures (Measure), the registries by name for backends,
// estimators and measures, and the usage errors (ErrUsage, FieldError).
// A model's optional interfaces, each named for what the model can do
// (Kerneler, GramBuilder, InPlaceKerneler, WarmStarter, ...), are found
// with As; package framework/jacobian reaches a model's Jacobian products,
// Grams, kernels and shifted predictions through whichever of them it has.
// Running an estimation is package pipeline's job, turning reduced models
// into intervals package inference's, and reading and writing data package
// dataio's.
//
// The framework names none of its implementations: backends, estimators and
// measures register themselves in their init functions, in the style of
// database/sql drivers, and are pulled in with a blank import.
//
// Conventions. Matrices are gonum mat types with one row per sample. A model's
// prediction is an n x k matrix: k = 1 holds the mean response for regression
// and P(Y = 1) for binary classification; k = K holds class probabilities for
// K-class classification. Features are standardised with train-split
// statistics before any model sees them, so "replacing a feature by its train
// mean" is setting its column to zero.
package framework
