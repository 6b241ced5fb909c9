"""importance(): variable importance of a network in memory, by vi.

The network is served from this process (lazyvi_plugin.Server, on a thread)
and vi attaches to it (`vi estimate --plugin-attach`): no module file, no
saved weights. The rows travel as CSV text through pipes that vi reads as
/dev/fd/N: nothing is written to disk. vi's progress lines reach sys.stderr as they
come and its warnings become Python warnings (VIWarning); its refusals
(exit 2) are ValueErrors with vi's own message.
"""

import csv
import json
import math
import os
import re
import shutil
import subprocess
import sys
import threading
import warnings
from typing import Any, Callable, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import torch

import lazyvi_plugin

from .live import LIVE, LiveBackend, served_network

# VI_ENV names the environment variable with the path of the vi executable.
VI_ENV = "LAZYVI_VI"

BUILD_HINT = ("build it in the lazyvi repository with `go build -o vi ./cmd/vi`, then put it on PATH "
              "or set %s=/path/to/vi" % VI_ENV)

# The report's result columns that come first, in this order.
COLUMNS = ["feature", "estimator", "vi", "se", "ci_low", "ci_high", "p_value"]


class VIWarning(UserWarning):
    """A warning of vi's (its stderr lines "vi: warning: ...")."""


class Results(list):
    """The results as a list of dicts, one per feature (or group) and
    estimator, when pandas is not installed; attrs["report"] holds the
    rest of vi's JSON report (the full model, baselines, the run's
    settings), as a DataFrame's attrs do."""

    def __init__(self, rows: List[dict], report: dict) -> None:
        super().__init__(rows)
        self.attrs = {"report": report}


def find_vi(path: Optional[str] = None) -> str:
    """The vi executable: path, else $LAZYVI_VI, else lazyvi's vi on PATH
    (another program named vi, an editor, is passed over). FileNotFoundError
    saying how to build it when there is none."""
    for given, where in ((path, "vi="), (os.environ.get(VI_ENV), "$" + VI_ENV)):
        if given:
            if not (os.path.isfile(given) and os.access(given, os.X_OK)):
                raise FileNotFoundError("%s %s: no such executable; %s" % (where, given, BUILD_HINT))
            return given
    found = shutil.which("vi")
    if found and _is_lazyvi(found):
        return found
    what = "the vi on PATH (%s) is not lazyvi's" % found if found else "no vi on PATH"
    raise FileNotFoundError("lazyvi's vi not found: %s; %s" % (what, BUILD_HINT))


def _is_lazyvi(path: str) -> bool:
    """Whether path is lazyvi's vi: its --version line is "vi VERSION goN
    OS/ARCH" (an editor's is not)."""
    try:
        p = subprocess.run([path, "--version"], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return p.returncode == 0 and re.match(r"vi \S+ go\d", p.stdout) is not None


def _frame(a) -> bool:
    return hasattr(a, "columns") and hasattr(a, "to_numpy")


def _matrix(a, name: str) -> Tuple[Optional[List[str]], np.ndarray]:
    """A 2-D float64 array of a (a DataFrame, a tensor, an array), with the
    DataFrame's column names."""
    names = None
    if _frame(a):
        names = [str(c) for c in a.columns]
        a = a.to_numpy(dtype=np.float64)
    elif isinstance(a, torch.Tensor):
        a = a.detach().to("cpu", torch.float64).numpy()
    x = np.asarray(a, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError("%s: want a 2-D array of rows and features, got %d dimensions" % (name, x.ndim))
    _finite(x, name, names)
    return names, x


def _vector(a, name: str, rows: int) -> Tuple[Optional[str], np.ndarray]:
    """The responses a (a Series, a tensor, an array; n or n x 1) as a
    float64 vector, with the Series' name."""
    label = None
    if hasattr(a, "name") and hasattr(a, "to_numpy"):
        label = None if a.name is None else str(a.name)
        a = a.to_numpy(dtype=np.float64)
    elif isinstance(a, torch.Tensor):
        a = a.detach().to("cpu", torch.float64).numpy()
    y = np.asarray(a, dtype=np.float64)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1:
        raise ValueError("%s: want one response per row, got shape %s" % (name, y.shape))
    if y.shape[0] != rows:
        raise ValueError("%s: %d responses for %d rows" % (name, y.shape[0], rows))
    _finite(y.reshape(-1, 1), name, [label or "y"])
    return label, y


def _finite(x: np.ndarray, name: str, names: Optional[List[str]]) -> None:
    bad = np.argwhere(~np.isfinite(x))
    if bad.size:
        i, j = bad[0]
        col = names[j] if names else "column %d" % (j + 1)
        raise ValueError("%s: row %d, %s: %r is not a finite number" % (name, i + 1, col, x[i, j]))


def _write_csv(f, names: List[str], x: np.ndarray, y: np.ndarray) -> None:
    """The rows to the text file f with the response as the last column,
    every value exact (17 significant digits)."""
    csv.writer(f).writerow(names)
    np.savetxt(f, np.column_stack([x, y]), fmt="%.17g", delimiter=",")


class _Feed:
    """A table vi reads from a pipe (its path /dev/fd/N, N inherited by vi),
    written by a thread while vi reads, so that the rows never touch the
    disk."""

    def __init__(self, names: List[str], x: np.ndarray, y: np.ndarray) -> None:
        self.read, self._write = os.pipe()
        self.path = "/dev/fd/%d" % self.read
        self._thread = threading.Thread(target=self._run, args=(names, x, y), daemon=True)

    def _run(self, names, x, y):
        try:
            with os.fdopen(self._write, "w", newline="") as f:
                _write_csv(f, names, x, y)
        except BrokenPipeError:
            pass  # vi stopped reading (it failed): its error says why

    def start(self) -> None:
        """Starts writing, once vi holds the read end, which this process
        then closes."""
        os.close(self.read)
        self._thread.start()

    def join(self) -> None:
        self._thread.join()


def _groups(groups) -> str:
    """--groups's text of a mapping name -> features, or a string as vi
    takes it."""
    if isinstance(groups, str):
        return groups
    return ";".join("%s=%s" % (g, ",".join(str(c) for c in cols)) for g, cols in groups.items())


def _relay(stream, lines: List[str], warned: List[str]) -> None:
    """vi's stderr: warnings kept for VIWarning, every other line written
    to sys.stderr as it comes (progress)."""
    for line in stream:
        lines.append(line)
        if line.startswith("vi: warning: "):
            warned.append(line[len("vi: warning: "):].strip())
        else:
            sys.stderr.write(line)
            sys.stderr.flush()


def _run_vi(cmd: List[str], feeds: Sequence[_Feed]) -> dict:
    """Runs vi, feeding it the tables of feeds and relaying its stderr; its
    JSON report, or ValueError (exit 2: vi's refusal) or RuntimeError."""
    try:
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             pass_fds=[f.read for f in feeds])
    finally:
        for f in feeds:
            f.start()
    lines: List[str] = []
    warned: List[str] = []
    t = threading.Thread(target=_relay, args=(p.stderr, lines, warned), daemon=True)
    t.start()
    try:
        out = p.stdout.read()
        p.wait()
    except BaseException:  # KeyboardInterrupt in the notebook: vi stops too
        p.terminate()
        p.wait()
        raise
    finally:
        t.join(5)
        for f in feeds:
            f.join()
        if not t.is_alive():
            # A relay still reading holds the stream's lock: closing it
            # would wait for that read, past the join's bound.
            p.stdout.close()
            p.stderr.close()
    for w in warned:
        warnings.warn(w, VIWarning, stacklevel=3)
    if p.returncode != 0:
        # vi's error is its last line, "vi: ..." (the lines before it are
        # progress and notes); a last line that is not vi's (a crash's
        # trace) shows the tail of what was printed.
        last = next((l.strip() for l in reversed(lines) if l.strip()), "")
        if last.startswith("vi: ") and not last.startswith("vi: warning: "):
            msg = last
        else:
            msg = "".join(lines[-5:]).strip()
        if p.returncode == 2:
            raise ValueError(msg)
        raise RuntimeError("vi failed (exit %d): %s" % (p.returncode, msg))
    return json.loads(out)


def _table(report: dict):
    """The results as a DataFrame when pandas is installed, else Results;
    the rest of the report in attrs["report"]."""
    rows = report.pop("results", [])
    # Every row's fields, in order of first appearance: an estimator's
    # own (lazy's lambda, no_update) need not be in the first row.
    cols = list(dict.fromkeys(COLUMNS + [k for r in rows for k in r]))
    rows = [{k: r.get(k, math.nan) for k in cols} for r in rows]
    try:
        import pandas as pd
    except ImportError:
        return Results(rows, report)
    df = pd.DataFrame(rows, columns=cols)
    df.attrs["report"] = report
    return df


def importance(model: torch.nn.Module, X, y, X_eval=None, y_eval=None, *,
               estimators: Union[str, Sequence[str], None] = None,
               groups: Union[Mapping[str, Sequence[str]], str, None] = None,
               measure: Optional[str] = None, seed: int = 1, task: Optional[str] = None,
               level: Optional[float] = None, test: Optional[str] = None, workers: Optional[int] = None,
               trained_elsewhere: bool = False, fit: Optional[Callable] = None,
               options: Optional[Mapping[str, Any]] = None, plot: Optional[str] = None,
               progress: str = "lines", vi: Optional[str] = None, args: Sequence[str] = ()):
    """Variable importance of the trained network model, by lazyvi's vi.

    model takes the rows of X (n x p: a numpy array, a pandas DataFrame
    whose columns name the features, or a tensor) and predicts y (the
    response itself for regression, the logit of P(Y = 1) for a 0/1
    response, K logits for class labels 0..K-1). It is served to vi as it
    is now (a copy: later training does not change the answer) and is
    never trained by this call.

    X, y are the rows the network was trained on, X_eval, y_eval rows it
    never saw: every score, VI, interval and test is computed on these, and
    the reduced models (a feature removed) learn from X, y. Without X_eval
    vi refuses, as for `vi estimate --opt weights=` without --eval-data
    (a network judged on rows it fitted makes null features look
    important), unless trained_elsewhere says that none of X's rows
    trained it (it is then judged on a seeded split of X).

    estimators ("lazy,dropout" or a list; vi's default when None), groups
    (name -> features, estimated together), measure, seed, task, level,
    test (estimate or covariance) and workers are vi estimate's flags of
    the same names; options are backend options for the networks vi
    trains (retrain, Shapley, ROAR: epochs, lr, batch, patience, tol,
    device, dtype), and fit(network, x, y, task) trains them instead of
    vi's Adam loop. plot draws vi's forest plot of the VIs to this file
    (.png, .svg or .pdf). progress is vi's --progress (lines, off);
    vi the executable (default: $LAZYVI_VI, or lazyvi's vi on PATH);
    args more vi estimate flags.

    Returns a pandas DataFrame when pandas is installed, else a list of
    dicts (Results), one row per feature (or group) and estimator with
    feature, estimator, vi, se, ci_low, ci_high, p_value and the report's
    other result fields; attrs["report"] is the rest of vi's JSON report
    (the full model's fit and scores, baselines, n_train, n_eval, the
    settings). vi's warnings are issued as VIWarning, its progress goes to
    sys.stderr.
    """
    bin_ = find_vi(vi)
    names, x = _matrix(X, "X")
    label, yv = _vector(y, "y", x.shape[0])
    if names is None:
        names = ["x%d" % (j + 1) for j in range(x.shape[1])]
    if (X_eval is None) != (y_eval is None):
        raise ValueError("X_eval and y_eval go together: give both or neither")
    target = label or "y"
    while target in names:
        target += "_"
    feeds = [_Feed(names + [target], x, yv)]
    cmd = [bin_, "estimate", "--data", feeds[0].path, "--target", target, "--format", "json", "--progress", progress,
           "--seed", str(seed), "--backend", "lazyvi-torch", "--opt", "weights=" + LIVE]
    if X_eval is not None:
        enames, xe = _matrix(X_eval, "X_eval")
        if xe.shape[1] != x.shape[1] or (enames is not None and enames != names):
            raise ValueError("X_eval: columns %s, want X's %s" % (enames or xe.shape[1], names))
        _, ye = _vector(y_eval, "y_eval", xe.shape[0])
        feeds.append(_Feed(names + [target], xe, ye))
        cmd += ["--eval-data", feeds[1].path]
    if trained_elsewhere:
        cmd.append("--trained-elsewhere")
    for flag, v in (("--estimators", estimators if isinstance(estimators, (str, type(None))) else ",".join(estimators)),
                    ("--groups", None if groups is None else _groups(groups)), ("--measure", measure),
                    ("--task", task), ("--level", level), ("--test", test), ("--workers", workers),
                    ("--plot", plot)):
        if v is not None:
            cmd += [flag, str(v)]
    for k, v in (options or {}).items():
        cmd += ["--opt", "%s=%s" % (k, v)]
    cmd += list(args)
    with lazyvi_plugin.Server(LiveBackend(served_network(model, x), fit)) as server:
        cmd[cmd.index("--backend"):cmd.index("--backend")] = ["--plugin-attach", server.handshake]
        try:
            report = _run_vi(cmd, feeds)
        except ValueError as e:
            if X_eval is None and "--eval-data" in str(e):
                raise ValueError("%s (here: pass X_eval= and y_eval=, or trained_elsewhere=True)" % e) from None
            raise
    return _table(report)
