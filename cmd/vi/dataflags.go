package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/lazyvi/lazyvi"
	"github.com/lazyvi/lazyvi/backendplugin"
	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/internal/progress"
	"github.com/lazyvi/lazyvi/pipeline"
	"github.com/lazyvi/lazyvi/report"
)

// dataFlags are the flags that vi estimate, shapley and roar share: the data
// and its response, the task and the measure, the backend and its options,
// and where the output goes. newDataFlags registers them on a command's flag
// set; check turns their values into a dataRun.
type dataFlags struct {
	cmd string // the command's name, for "see 'vi help CMD'"

	data, target, task, measure string
	evalData, splitColumn       string // --eval-data, --split-column
	features, drop, categorical string // --features, --drop, --categorical: comma-separated
	missing                     string // --missing
	trainedElsewhere            bool   // --trained-elsewhere
	backend, plugin             string
	pluginAttach                string // --plugin-attach
	backendProcess              bool   // --backend-process
	pluginTimeout               time.Duration
	options                     map[string]*string // backend options with a flag of their own (hidden, epochs, image)
	opts                        optionsFlag        // --opt key=value
	format, out                 string
	progress                    string // --progress
}

// pluginTimeoutEnv names the environment variable that sets
// --plugin-timeout when it is not given (a duration: 2m, 90s), e.g. for
// every job of a batch script on a loaded cluster.
const pluginTimeoutEnv = "LAZYVI_PLUGIN_TIMEOUT"

// dataUsage is the help text of each shared flag, unless the command gives
// its own to newDataFlags.
var dataUsage = map[string]string{
	"data":              "CSV or Parquet `file` (CSV with a header row; - for standard input); text columns are categories (default: the built-in diabetes data)",
	"features":          "feature `columns`, comma-separated names or globs such as x*,age (default: every column but the --target)",
	"drop":              "leave out these `columns`, comma-separated names or globs (an ID column, say)",
	"categorical":       "treat these numeric `columns` as categories (integer codes), comma-separated; text columns are categories anyway",
	"missing":           "what to do with missing cells (empty, NA, NaN, null): error (the default: name every column that has them), drop (the rows), or impute (each training set's mean or most frequent category, with a missingness indicator)",
	"target":            "response `column` (default: the last column)",
	"eval-data":         "CSV or Parquet `file` of evaluation rows, with --data's columns: every model learns from --data only, every score and VI is on these rows only",
	"split-column":      "`column` of --data saying which rows evaluate: train/eval (one split) or fold numbers 1..K (your own cross-fitting folds); not a feature",
	"trained-elsewhere": "the network loaded with --opt weights= was trained on none of --data's rows: judge it on a seeded split of them",
	"task":              "force the `task`: regression, binary or multiclass",
	"measure":           "predictiveness measure `name` (default: mse for regression, logloss for binary and multiclass; accuracy and auc are reported beside it)",
	"backend":           "model backend `name` (see 'vi backends')",
	"plugin":            "run the backend from this external plugin `executable`: a path, or a name on PATH",
	"plugin-attach":     "use the backend a running process already serves (a Python process's, see docs/python.md), named by the `line` its plugin server prints, CORE|APP|NETWORK|ADDR|grpc, instead of starting one; --backend names it in the report",
	"backend-process":   "serve a built-in backend from a subprocess over the plugin protocol, as a --plugin one always is, instead of in vi's own process (slower: each call's data crosses between the processes)",
	"plugin-timeout":    "give up on a backend process that has not completed the plugin handshake after this `duration` ($LAZYVI_PLUGIN_TIMEOUT when not given)",
	"hidden":            "backend option hidden: hidden layer `widths`",
	"epochs":            "backend option epochs: maximum training `epochs`",
	"image":             "backend option image: the features are the pixels of an `HxW` image (cnn)",
	"opt":               "backend option `key=value` (repeatable; see 'vi backends')",
	"format":            "output `format`: table, csv or json",
	"out":               "write the output to `file` (atomically) instead of stdout",
	"progress":          progress.Usage,
}

// newDataFlags registers the shared flags on cmd's flag set: options names
// the backend options that have a flag of their own (of hidden, epochs and
// image), usage replaces the help text of the flags it names.
func newDataFlags(cmd *Command, options []string, usage map[string]string) *dataFlags {
	help := groupUsage("newDataFlags", dataUsage, usage)
	f := &dataFlags{cmd: cmd.Name(), options: map[string]*string{}, opts: optionsFlag{}}
	fs := &cmd.Flag
	fs.StringVar(&f.data, "data", "", help("data"))
	fs.StringVar(&f.target, "target", "", help("target"))
	fs.StringVar(&f.features, "features", "", help("features"))
	fs.StringVar(&f.drop, "drop", "", help("drop"))
	fs.StringVar(&f.categorical, "categorical", "", help("categorical"))
	fs.StringVar(&f.missing, "missing", "error", help("missing"))
	fs.StringVar(&f.evalData, "eval-data", "", help("eval-data"))
	fs.StringVar(&f.splitColumn, "split-column", "", help("split-column"))
	fs.BoolVar(&f.trainedElsewhere, "trained-elsewhere", false, help("trained-elsewhere"))
	fs.StringVar(&f.task, "task", "", help("task"))
	fs.StringVar(&f.measure, "measure", "", help("measure"))
	fs.StringVar(&f.backend, "backend", lazyvi.DefaultBackend, help("backend"))
	fs.StringVar(&f.plugin, "plugin", "", help("plugin"))
	fs.StringVar(&f.pluginAttach, "plugin-attach", "", help("plugin-attach"))
	fs.BoolVar(&f.backendProcess, "backend-process", false, help("backend-process"))
	fs.DurationVar(&f.pluginTimeout, "plugin-timeout", backendplugin.DefaultStartTimeout, help("plugin-timeout"))
	for _, name := range options {
		f.options[name] = fs.String(name, "", help(name))
	}
	fs.Var(f.opts, "opt", help("opt"))
	fs.StringVar(&f.format, "format", "table", help("format"))
	fs.StringVar(&f.out, "out", "", help("out"))
	fs.StringVar(&f.progress, "progress", "auto", help("progress"))
	return f
}

// groupUsage returns the help text of a flag group's flags: the command's
// own (usage) where it gives one, else the group's (group). A name that is
// not in the group is a programming error, which every test that builds the
// commands catches: it panics, naming the caller.
func groupUsage(caller string, group, usage map[string]string) func(name string) string {
	help := func(name string) string {
		if _, ok := group[name]; !ok {
			panic(caller + ": no flag --" + name + " in the group")
		}
		if u, ok := usage[name]; ok {
			return u
		}
		return group[name]
	}
	for name := range usage {
		help(name)
	}
	return help
}

// givenFlags returns the names of the flags given on the command line.
func givenFlags(cmd *Command) map[string]bool {
	set := map[string]bool{}
	cmd.Flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
}

// checkOutput checks --format, and that --out and the command's other
// output files (more; those with path "" are not written) can be
// written, each named by its flag.
func (f *dataFlags) checkOutput(more ...fileFlag) error {
	if !slices.Contains(report.Formats, f.format) {
		return framework.Usagef("unknown --format %q (want table, csv or json)", f.format)
	}
	for _, o := range append([]fileFlag{{"--out", f.out}}, more...) {
		if o.path != "" {
			if err := checkOutDir(o.flag, o.path); err != nil {
				return err
			}
		}
	}
	return nil
}

// dataRun is what the shared flags say for one run, checked.
type dataRun struct {
	app               *app
	cmd, data, target string
	evalData, split   string // --eval-data, --split-column
	trainedElsewhere  bool   // --trained-elsewhere
	partition         []int  // the rows' train/evaluation labels (pipeline.Config.Partition); nil: a seeded split
	format, out       string
	progressMode      progress.Mode
	task              *framework.Task   // nil: inferred from the response
	measure           framework.Measure // nil: the task's default
	opts              map[string]string // the backend options the user set
	backend           backendSpec
	autoHidden        bool // --hidden auto: choose the mlp's architecture (fullmodel.go)
	// prep says how the data file becomes the data set: --features,
	// --drop, --categorical, --missing (its Target is set at load).
	prep dataio.PrepareOptions
}

// check parses --task and --measure, gathers the backend options (set holds
// the flags given, see givenFlags) and checks the backend flags, for a run
// in a.
func (f *dataFlags) check(a *app, set map[string]bool) (*dataRun, error) {
	r := &dataRun{app: a, cmd: f.cmd, data: f.data, target: f.target, format: f.format, out: f.out,
		evalData: f.evalData, split: f.splitColumn, trainedElsewhere: f.trainedElsewhere}
	if err := f.checkEval(); err != nil {
		return nil, err
	}
	prep, err := f.prepareOptions()
	if err != nil {
		return nil, err
	}
	r.prep = prep
	mode, err := progress.ParseMode(f.progress)
	if err != nil {
		return nil, err
	}
	r.progressMode = mode
	if f.task != "" {
		t, err := framework.ParseTask(f.task)
		if err != nil {
			return nil, err
		}
		r.task = &t
	}
	if f.measure != "" {
		m, err := framework.LookupMeasure(f.measure)
		if err != nil {
			return nil, err
		}
		r.measure = m
	}
	r.opts = map[string]string{}
	for k, v := range f.opts {
		r.opts[k] = v
	}
	for name, v := range f.options {
		if !set[name] {
			continue
		}
		if _, dup := r.opts[name]; dup {
			return nil, framework.Usagef("backend option %s set both by --%s and by --opt", name, name)
		}
		r.opts[name] = *v
	}
	newSpec := func() (backendSpec, error) { return newBackendSpec(f.backend, set["backend"], f.plugin) }
	if f.pluginAttach != "" {
		newSpec = func() (backendSpec, error) { return attachSpec(f.pluginAttach, f.backend, set) }
	}
	bk, err := newSpec()
	if err != nil {
		return nil, err
	}
	if f.pluginTimeout <= 0 {
		return nil, framework.Usagef("--plugin-timeout must be positive, got %v", f.pluginTimeout)
	}
	if v := os.Getenv(pluginTimeoutEnv); v != "" && !set["plugin-timeout"] {
		if f.pluginTimeout, err = time.ParseDuration(strings.TrimSpace(v)); err != nil || f.pluginTimeout <= 0 {
			return nil, framework.Usagef("$%s must be a positive duration such as 2m or 90s, got %q", pluginTimeoutEnv, v)
		}
	}
	bk.startTimeout, bk.process = f.pluginTimeout, f.backendProcess
	r.backend = bk
	if r.autoHidden, err = hiddenAuto(r.opts, bk); err != nil {
		return nil, err
	}
	return r, nil
}

// load reads --data ("-": standard input), or without it the built-in
// diabetes data (and says so), and checks that the measure fits the
// response. It returns "interrupted" as soon as ctx is done, even while
// the file blocks (a FIFO without a writer, an idle pipe).
func (r *dataRun) load(ctx context.Context) (*dataio.Dataset, error) {
	var d *dataio.Dataset
	var err error
	if r.data == "" {
		if d, err = lazyvi.Diabetes(); err != nil {
			return nil, err
		}
		fmt.Fprintf(r.app.stderr, "vi: no --data given: using the built-in diabetes data (%d rows, response %q); see 'vi help %s'\n",
			rows(d), d.Names[len(d.Names)-1], r.cmd)
	} else if d, r.partition, err = loadEvalData(ctx, r.data, r.evalData, r.split, r.prepare()); err != nil {
		return nil, runError(ctx, err)
	}
	if err := pipeline.CheckMeasure(d, r.target, r.task, r.measure); err != nil {
		return nil, err
	}
	return d, nil
}

// progress returns the run's progress on stderr (--progress).
func (r *dataRun) progress(label string) *progress.Meter {
	return progress.New(r.app.stderr, r.progressMode, label)
}

// open starts the backend (a plugin's or --backend-process's subprocess,
// or a built-in one in this process), saying so on prog; see
// backendSpec.openLogged. Closing reports a failure as "backend NAME:
// close: ...".
func (r *dataRun) open(ctx context.Context, prog *progress.Meter) (framework.Backend, func() error, error) {
	prog.SetStatus(fmt.Sprintf("starting backend %s", r.backend.name))
	be, closeBackend, err := r.backend.openLogged(ctx, r.app.stderr, prog)
	if err != nil {
		return nil, nil, runError(ctx, err) // "interrupted" during the start too
	}
	return be, func() error {
		if err := closeBackend(); err != nil {
			return fmt.Errorf("backend %s: close: %w", r.backend.name, err)
		}
		return nil
	}, nil
}

// checkBackend is checkBackend on the run's backend, response and options.
func (r *dataRun) checkBackend(be framework.Backend, d *dataio.Dataset, ests []framework.Estimator) error {
	return pipeline.CheckBackend(r.backend.name, be, d, r.target, r.task, ests, r.opts)
}

// config is the run's pipeline.Config as far as the shared flags say.
func (r *dataRun) config(be framework.Backend) pipeline.Config {
	cfg := pipeline.Config{Target: r.target, Task: r.task, BackendName: r.backend.name, Backend: be, Options: r.opts,
		Partition: r.partition, TrainedElsewhere: r.trainedElsewhere}
	r.fullModelConfig(&cfg)
	return cfg
}

// training says on prog that the full model is training.
func (r *dataRun) training(prog *progress.Meter, d *dataio.Dataset) {
	prog.SetStatus(fmt.Sprintf("training the full model (%s, %d rows)", r.backend.name, rows(d)))
}

// emit writes the output to --out or stdout.
func (r *dataRun) emit(buf *bytes.Buffer) error { return r.app.emit(r.out, buf) }

// keepErr calls f and keeps its error in *err unless *err is already one;
// deferred, it reports a failure to close when the run itself succeeded.
func keepErr(err *error, f func() error) {
	if ferr := f(); ferr != nil && *err == nil {
		*err = ferr
	}
}

// errInterrupted is the error of a run that a signal stopped.
var errInterrupted = errors.New("interrupted")

// runError is the error of a run that failed with err: errInterrupted when
// ctx was cancelled (SIGINT, SIGTERM), else err.
func runError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return errInterrupted
	}
	return err
}

// checkNotInput reports an output file of the command that is one of its
// input files, compared by file identity (os.SameFile, so that another
// name, a hard link or a symbolic link is caught too): writing it would
// destroy the input. ins are the command's input files besides --data;
// outs its output files besides --out (and --out's checkpoint OUT.partial).
// Paths "" and "-" and outputs that do not exist yet are skipped.
func (f *dataFlags) checkNotInput(outs []fileFlag, ins ...fileFlag) error {
	ins = append([]fileFlag{{"--data", f.data}, {"--eval-data", f.evalData}}, ins...)
	if f.out != "" {
		outs = append([]fileFlag{{"--out", f.out}, {"--out's checkpoint", f.out + ".partial"}}, outs...)
	}
	return checkNotInput(outs, ins)
}

// targetName is the name of the run's response: --target, or the last
// column of d.
func (r *dataRun) targetName(d *dataio.Dataset) string {
	if r.target != "" || len(d.Names) == 0 {
		return r.target
	}
	return d.Names[len(d.Names)-1]
}

// prepareOptions reads --features, --drop, --categorical and --missing.
func (f *dataFlags) prepareOptions() (dataio.PrepareOptions, error) {
	m, err := dataio.ParseMissing(f.missing)
	if err != nil {
		return dataio.PrepareOptions{}, framework.Usagef("--missing %s: want error, drop or impute", f.missing)
	}
	o := dataio.PrepareOptions{Features: commaList(f.features), Drop: commaList(f.drop), Categorical: commaList(f.categorical), Missing: m}
	if (len(o.Features) > 0 || len(o.Drop) > 0 || len(o.Categorical) > 0 || m != dataio.MissingError) && f.data == "" {
		return o, framework.Usagef("--features, --drop, --categorical and --missing need --data (the built-in data has none of these to choose)")
	}
	return o, nil
}

// prepare is the run's preparation of its data file, for its --target.
func (r *dataRun) prepare() dataio.PrepareOptions {
	p := r.prep
	p.Target = r.target
	return p
}

// commaList splits a comma-separated flag value into its trimmed, non-empty
// items (nil for none).
func commaList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}
