"""importance() through the real vi: a network trained here on 2000 rows of
the linear setting (rho 0.9, three null features), passed live with 1000
held-out rows, against the truth and against the CLI given the same network
saved as a module and a state dict.

vi is $LAZYVI_VI (go test ./plugins/torch sets it), else built here with
go; without either the tests skip (fail under CI=true)."""

import json
import os
import pathlib
import shutil
import subprocess
import sys

import numpy as np
import pytest
import torch

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


def test_dataframe_in_and_out(vi, setting):
    pd = pytest.importorskip("pandas", reason="pandas is not installed: the DataFrame path is not exercised")
    s = setting
    cols = ["age", "dose", "bmi", "n1", "n2", "n3"]
    res = lazyvi_torch.importance(s["net"], pd.DataFrame(s["x"][:300], columns=cols), pd.Series(s["y"][:300], name="out"),
                                  pd.DataFrame(s["xe"][:200], columns=cols), s["ye"][:200],
                                  estimators="dropout", groups={"noise": ["n1", "n2", "n3"]}, vi=vi, progress="off")
    assert isinstance(res, pd.DataFrame)
    assert list(res["feature"]) == ["age", "dose", "bmi", "noise"]
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
