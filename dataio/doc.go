// Package dataio reads and writes what a run consumes and leaves behind:
// data sets from CSV files (LoadCSV, ReadCSV), groups of columns
// (ParseGroups, ReadGroups, OneHotGroups, ResolveFeatures, ResolveUnits), model files of
// trained full models (ReadModel, WriteModel) and checkpoint files of
// finished reductions (OpenCheckpoint). Bad input is an *InputError naming
// the file, row and column.
package dataio
