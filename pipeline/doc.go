// Package pipeline runs an estimation: it splits the data and trains the
// full model (Prepare, PrepareFolds, choosing among Candidates), schedules
// the estimators' reductions on workers with checkpoints (Reduce), infers
// from them (Estimate) and assembles the report with the full model's
// diagnostics (Run, Report). Model files of trained full models
// (TrainModel) and the shards of a run (Shard, MergeReports) are its too.
package pipeline
