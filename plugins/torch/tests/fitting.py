"""A small fitted model of lazyvi-torch and its data, for the tests of its
Jacobian products."""

import torch

from lazyvi_torch import model


def fitted(task, classes, opts, n=120, p=5, seed=1, epochs="2"):
    """A model of the task (0 regression, 1 binary, 2 multiclass of
    classes) with options opts, trained epochs epochs on n seeded rows of p
    features; the model, its rows and the generator that drew them."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, p, generator=g, dtype=torch.float64)
    if task == 0:
        y = torch.randn(n, generator=g, dtype=torch.float64)
    else:
        y = torch.randint(0, max(classes, 2), (n,), generator=g).to(torch.float64)
    m = model.new_model(task, p, seed, classes, dict(opts, epochs=epochs))
    m.fit(x, y)
    return m, x, g
