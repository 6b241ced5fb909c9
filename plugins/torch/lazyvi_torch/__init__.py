"""lazyvi-torch: lazyvi's PyTorch backend, served over the backend protocol
of lazyvi's proto/lazyvi/backend/v2 by the lazyvi_plugin kit: as a plugin
process (the lazyvi-torch command, `vi estimate --plugin`), or for a network
in memory by importance() (see docs/python.md and docs/torch.md)."""

from .api import Results, VIWarning, find_vi, importance

__all__ = ["importance", "find_vi", "Results", "VIWarning"]
