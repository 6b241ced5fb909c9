"""The options: device= and dtype= checked, a module that does not import
named with its line."""

import pytest
import torch

from lazyvi_torch import model, options
from lazyvi_torch.errors import UsageError


def test_defaults():
    cfg = options.parse({})
    assert cfg.device.type == ("cuda" if torch.cuda.is_available() else "cpu")
    assert cfg.dtype == torch.float64 and cfg.epochs == 2000 and cfg.patience == 20 and cfg.valid == 0.2
    assert set(options.DEFAULTS) == {n for n, _ in options.INFO}


@pytest.mark.parametrize("k, v, msg", [
    ("device", "tpu", "want cpu, cuda"),
    ("device", "cuda:99", "CUDA"),
    ("dtype", "float16", "want float64 or float32"),
    ("valid", "0.6", "above 0.5"),
    ("valid", "-0.1", "want a finite number >= 0"),
])
def test_bad(k, v, msg):
    with pytest.raises(UsageError, match=msg):
        options.parse({k: v})


def test_cpu_float32():
    cfg = options.parse({"device": "cpu", "dtype": "float32"})
    assert cfg.device == torch.device("cpu") and cfg.dtype == torch.float32
    g = torch.Generator().manual_seed(1)
    x = torch.randn(50, 3, generator=g, dtype=torch.float64)
    m = model.new_model(0, 3, 1, 0, {"hidden": "5", "epochs": "2", "device": "cpu", "dtype": "float32"})
    m.fit(x, x[:, 0])
    p = m.predict(x)
    assert p.dtype == torch.float64 and p.shape == (50, 1)
    v = torch.randn(m.num_params, 2, generator=g, dtype=torch.float64)
    j = m.jacobian(x)
    assert torch.allclose(m.jacobian_mul(x, v), j @ v, rtol=1e-4, atol=1e-4)


def test_module_import_error(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import torch\n\nraise ValueError('no such layer')\n")
    with pytest.raises(UsageError, match=r"bad.py does not import: line 3: ValueError: no such layer"):
        model.new_model(0, 3, 1, 0, {"module": str(bad)})
    syn = tmp_path / "syn.py"
    syn.write_text("def build(n, k):\n    return (\n")
    with pytest.raises(UsageError, match=r"syn.py does not import: line \d+: SyntaxError"):
        model.new_model(0, 3, 1, 0, {"module": str(syn)})


def test_pretrained_needs_weights():
    with pytest.raises(UsageError, match="weights="):
        model.new_model(0, 3, 1, 0, {}, pretrained=True)


def test_file_options_say_what_is_wrong(tmp_path):
    """A weights= or module= that is a directory or a device is named as
    such, not as a missing file."""
    for k in ("weights", "module"):
        with pytest.raises(UsageError, match="no such file: " + str(tmp_path / "none.pt")):
            options.parse({k: str(tmp_path / "none.pt")})
        with pytest.raises(UsageError, match="is a directory, not a file"):
            options.parse({k: str(tmp_path)})
        with pytest.raises(UsageError, match="is not a regular file"):
            options.parse({k: "/dev/zero"})
