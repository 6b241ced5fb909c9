"""importance() through the real vi: a network trained here on 2000 rows of
the linear setting (rho 0.9, three null features), passed live with 1000
held-out rows, against the truth and against the CLI given the same network
saved as a module and a state dict.

vi is $LAZYVI_VI (go test ./plugins/torch sets it), else built here with
go; without either the tests skip (fail under CI=true)."""

import json
import math
import os
import pathlib
import shutil
import subprocess
import sys

import numpy as np
import pytest
import torch

import lazyvi_plugin
import lazyvi_torch
from lazyvi_torch import live

HERE = pathlib.Path(__file__).resolve().parents[1]
ROOT = HERE.parents[1]


def _need(why):
    if os.environ.get("CI") == "true":
        pytest.fail(why)
    pytest.skip(why)


@pytest.fixture(scope="module")
def vi(tmp_path_factory):
    if os.environ.get(lazyvi_torch.api.VI_ENV):
        return os.environ[lazyvi_torch.api.VI_ENV]
    if not shutil.which("go"):
        _need("no vi: set %s or put go on PATH" % lazyvi_torch.api.VI_ENV)
    out = tmp_path_factory.mktemp("vi") / "vi"
    subprocess.run(["go", "build", "-o", str(out), "./cmd/vi"], cwd=ROOT, check=True)
    return str(out)


def simulate(vi, path, n, seed):
    subprocess.run([vi, "simulate", "--setting", "linear", "--rho", "0.9", "--n", str(n), "--seed", str(seed),
                    "--out", str(path)], check=True, capture_output=True)
    d = np.loadtxt(path, delimiter=",", skiprows=1)
    truth = json.loads(path.with_suffix(".truth.json").read_text())["truth"]
    return d[:, :-1], d[:, -1], truth


# The network: one tanh layer of 16 (small, so that lazy's Jacobians are
# quick).
NETWORK = """import torch


def network(n_inputs, n_outputs):
    return torch.nn.Sequential(torch.nn.Linear(n_inputs, 16), torch.nn.Tanh(), torch.nn.Linear(16, n_outputs))
"""


def train(x, y):
    """NETWORK trained on the rows as they are (minibatch Adam, 60 epochs),
    as a notebook would."""
    torch.manual_seed(0)
    ns = {}
    exec(NETWORK, ns)
    net = ns["network"](x.shape[1], 1).double()
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    opt = torch.optim.Adam(net.parameters(), lr=0.01)
    for _ in range(60):
        for idx in torch.randperm(len(yt)).split(128):
            opt.zero_grad()
            ((net(xt[idx])[:, 0] - yt[idx]) ** 2).mean().backward()
            opt.step()
    return net


@pytest.fixture(scope="module")
def setting(vi, tmp_path_factory):
    d = tmp_path_factory.mktemp("linear")
    x, y, truth = simulate(vi, d / "train.csv", 2000, 11)
    xe, ye, _ = simulate(vi, d / "eval.csv", 1000, 12)
    return dict(dir=d, x=x, y=y, xe=xe, ye=ye, truth=truth, net=train(x, y))


def rows(res):
    """The results as dicts (a DataFrame's or Results')."""
    return res.to_dict("records") if hasattr(res, "to_dict") else list(res)


def launcher(tmp):
    """The lazyvi-torch command on this checkout's sources."""
    path = tmp / "lazyvi-torch"
    pp = os.pathsep.join([str(HERE), str(HERE.parent / "python")])
    path.write_text("#!/bin/sh\nPYTHONPATH=%s exec %s -m lazyvi_torch \"$@\"\n" % (pp, sys.executable))
    path.chmod(0o755)
    return path


# The module= file of the network as vi is served it: NETWORK behind
# Unstandardise (its statistics come with the state dict).
MODULE = NETWORK + '''from lazyvi_torch.live import Unstandardise


def build(n_inputs, n_outputs):
    z = torch.zeros(n_inputs, dtype=torch.float64)
    return torch.nn.Sequential(Unstandardise(z, z + 1), network(n_inputs, n_outputs))
'''


def test_live_network(vi, setting):
    s = setting
    # X as an array, the held-out rows as tensors.
    res = lazyvi_torch.importance(s["net"], s["x"], s["y"], torch.from_numpy(s["xe"]), torch.from_numpy(s["ye"]),
                                  estimators="lazy", seed=1, workers=2, vi=vi)
    got = rows(res)
    assert [r["feature"] for r in got] == ["x1", "x2", "x3", "x4", "x5", "x6"]
    report = res.attrs["report"]
    assert report["n_train"] == 2000 and report["n_eval"] == 1000 and report["full"]["loaded"]
    for r in got:
        truth = s["truth"][r["feature"]]
        print("%s vi %.4f se %.4f p %.3g (truth %.4f)" % (r["feature"], r["vi"], r["se"], r["p_value"], truth))
        assert r["ci_low"] <= r["vi"] <= r["ci_high"]
        if truth == 0:
            assert r["p_value"] >= 0.05, "null %s rejected" % r["feature"]
        else:
            assert abs(r["vi"] - truth) <= max(3 * r["se"], 0.1 * truth), r

    # The CLI on the same network saved as a module and a state dict.
    d = s["dir"]
    (d / "net.py").write_text(MODULE)
    torch.save(live.served_network(s["net"], s["x"]).state_dict(), d / "net.pt")
    p = subprocess.run([vi, "estimate", "--data", str(d / "train.csv"), "--eval-data", str(d / "eval.csv"),
                        "--plugin", str(launcher(d)), "--opt", "module=" + str(d / "net.py"),
                        "--opt", "weights=" + str(d / "net.pt"), "--estimators", "lazy", "--seed", "1",
                        "--workers", "2", "--format", "json", "--progress", "off"],
                       capture_output=True, text=True, check=True)
    cli = json.loads(p.stdout)["results"]
    assert len(cli) == len(got)
    for a, b in zip(got, cli):
        assert a["feature"] == b["feature"]
        for k in ("vi", "se", "ci_low", "ci_high", "p_value"):
            assert abs(a[k] - b[k]) <= 1e-9, (a["feature"], k, a[k], b[k])


def test_refused_without_eval_rows(vi, setting):
    s = setting
    with pytest.raises(ValueError, match=r"give rows it never saw with --eval-data.*pass X_eval= and y_eval="):
        lazyvi_torch.importance(s["net"], s["x"], s["y"], vi=vi, estimators="lazy")


def test_list_without_pandas(vi, setting, monkeypatch):
    # pandas hidden (or absent): a list of dicts with the report in attrs.
    monkeypatch.setitem(sys.modules, "pandas", None)
    s = setting
    res = lazyvi_torch.importance(s["net"], s["x"][:300], s["y"][:300], s["xe"][:200], s["ye"][:200],
                                  estimators="dropout", vi=vi, progress="off")
    assert isinstance(res, lazyvi_torch.Results) and isinstance(res[0], dict)
    assert list(res[0])[:7] == ["feature", "estimator", "vi", "se", "ci_low", "ci_high", "p_value"]
    assert res.attrs["report"]["n_eval"] == 200 and "results" not in res.attrs["report"]


def pandas():
    try:
        import pandas as pd
    except ImportError:
        _need("pandas is not installed (Debian: apt-get install python3-pandas): the DataFrame path is not exercised")
    return pd


def test_dataframe_in_and_out(vi, setting):
    pd = pandas()
    s = setting
    cols = ["age", "dose", "bmi", "n1", "n2", "n3"]
    res = lazyvi_torch.importance(s["net"], pd.DataFrame(s["x"][:300], columns=cols), pd.Series(s["y"][:300], name="out"),
                                  pd.DataFrame(s["xe"][:200], columns=cols), s["ye"][:200],
                                  estimators="dropout", groups={"noise": ["n1", "n2", "n3"]}, vi=vi, progress="off")
    assert isinstance(res, pd.DataFrame)
    # vi's order: the groups, then the features in no group.
    assert list(res["feature"]) == ["noise", "age", "dose", "bmi"]
    assert res.attrs["report"]["n_eval"] == 200


def test_missing_vi_says_how_to_build_it(monkeypatch, tmp_path):
    monkeypatch.delenv(lazyvi_torch.api.VI_ENV, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(FileNotFoundError, match=r"go build -o vi \./cmd/vi"):
        lazyvi_torch.find_vi()
    with pytest.raises(FileNotFoundError, match="go build"):
        lazyvi_torch.find_vi(str(tmp_path / "vi"))
    # An editor named vi on PATH is passed over.
    (tmp_path / "vi").write_text("#!/bin/sh\necho 'VIM - Vi IMproved 9.0'\n")
    (tmp_path / "vi").chmod(0o755)
    with pytest.raises(FileNotFoundError, match="is not lazyvi's"):
        lazyvi_torch.find_vi()


# A stand-in for vi that records its arguments and the rows it is fed,
# writes a progress line and a warning to stderr, and answers with a report
# whose first row lacks the fields of the estimator after it (lazy's), or
# fails with its last line as vi's error.
FAKE_VI = """#!/bin/sh
printf '%%s\\n' "$@" > %(dir)s/args
cat "$3" > %(dir)s/data.csv
echo "vi: lazy/dropout 3/4 reductions (75%%), 30s elapsed, eta 10s" >&2
echo "vi: warning: the full model does not beat the linear baseline" >&2
%(end)s
"""

REPORT = """cat <<'EOF'
{"n_train": 3, "n_eval": 2, "full": {"loaded": true}, "results": [
 {"feature": "a", "estimator": "dropout", "vi": 1, "se": 0.1, "ci_low": 0.8, "ci_high": 1.2, "p_value": 0, "seconds": 0.1},
 {"feature": "a", "estimator": "lazy", "vi": 0.5, "se": 0.1, "ci_low": 0.3, "ci_high": 0.7, "p_value": 0, "seconds": 0.2,
  "lambda": 3.5, "baseline_score": -1},
 {"feature": "b", "estimator": "lazy", "vi": 0, "se": 0.1, "ci_low": -0.2, "ci_high": 0.2, "p_value": 0.5, "seconds": 0.2,
  "lambda": null, "no_update": true, "baseline_score": -1}]}
EOF"""


def fake_vi(tmp_path, end):
    path = tmp_path / "vi"
    path.write_text(FAKE_VI % {"dir": tmp_path, "end": end})
    path.chmod(0o755)
    return str(path)


def small():
    torch.manual_seed(1)
    net = torch.nn.Linear(2, 1).double()
    x = np.array([[0.1, 1.0 / 3], [2.0, -1e-300], [3.0, 4.0]])
    return net, x, np.array([1.0, 2.0, 0.5]), x[:2] + 1, np.array([0.0, 1.0])


@pytest.mark.parametrize("with_pandas", [True, False])
def test_progress_warnings_and_fields(tmp_path, capsys, monkeypatch, with_pandas):
    if with_pandas:
        pandas()
    else:
        monkeypatch.setitem(sys.modules, "pandas", None)
    net, x, y, xe, ye = small()
    with pytest.warns(lazyvi_torch.VIWarning, match="^the full model does not beat the linear baseline$"):
        res = lazyvi_torch.importance(net, x, y, xe, ye, estimators=["dropout", "lazy"], vi=fake_vi(tmp_path, REPORT))
    # Progress reaches sys.stderr (a notebook's cell); the warning only as
    # a warning.
    err = capsys.readouterr().err
    assert "vi: lazy/dropout 3/4 reductions (75%), 30s elapsed, eta 10s\n" in err and "warning" not in err
    # Every row's fields are columns, lazy's too though the first row is
    # dropout's.
    got = rows(res)
    assert list(got[0]) == lazyvi_torch.api.COLUMNS + ["seconds", "lambda", "baseline_score", "no_update"]
    assert [r["feature"] for r in got] == ["a", "a", "b"] and got[1]["lambda"] == 3.5
    assert got[2]["no_update"] is True and math.isnan(got[0]["lambda"])
    assert res.attrs["report"] == {"n_train": 3, "n_eval": 2, "full": {"loaded": True}}
    # The command: the rows as exact CSV through a pipe, the network
    # attached, the estimators joined.
    args = (tmp_path / "args").read_text().splitlines()
    assert args[:2] == ["estimate", "--data"] and args[2].startswith("/dev/fd/")
    assert args[args.index("--plugin-attach") + 1].startswith("1|%d|unix|" % lazyvi_plugin.PROTOCOL_VERSION)
    assert args[args.index("--estimators") + 1] == "dropout,lazy" and args[args.index("--opt") + 1] == "weights=memory"
    assert args[args.index("--eval-data") + 1].startswith("/dev/fd/")
    fed = (tmp_path / "data.csv").read_text().splitlines()
    assert fed[0] == "x1,x2,y"
    assert np.array_equal(np.array([[float(v) for v in l.split(",")] for l in fed[1:]]), np.column_stack([x, y]))


@pytest.mark.parametrize("code, err", [(2, ValueError), (1, RuntimeError)])
def test_vi_error_is_its_last_line(tmp_path, code, err):
    net, x, y, xe, ye = small()
    end = 'echo "vi: the error, on one line" >&2; exit %d' % code
    with pytest.raises(err) as e, pytest.warns(lazyvi_torch.VIWarning):
        lazyvi_torch.importance(net, x, y, xe, ye, vi=fake_vi(tmp_path, end))
    want = "vi: the error, on one line"
    assert str(e.value) == (want if code == 2 else "vi failed (exit 1): " + want)


def test_crash_after_progress_shows_its_tail(tmp_path):
    # A crash (a Go panic's trace) after vi's progress line is shown by its
    # tail, not by the progress line that preceded it.
    net, x, y, xe, ye = small()
    end = 'echo "panic: runtime error: index out of range" >&2; echo "goroutine 1 [running]:" >&2; exit 2'
    with pytest.raises(ValueError) as e, pytest.warns(lazyvi_torch.VIWarning):
        lazyvi_torch.importance(net, x, y, xe, ye, vi=fake_vi(tmp_path, end))
    assert "panic: runtime error" in str(e.value) and "goroutine 1" in str(e.value)
