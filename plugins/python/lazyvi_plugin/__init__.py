"""lazyvi-plugin: the kit for lazyvi backend plugins in Python.

A framework fills backend.Backend and backend.Model (fit, predict, and for
gradients jacobian and predict_shifted); the kit speaks the rest: go-plugin's
handshake, health and shutdown, the Backend service of lazyvi's
proto/lazyvi/backend/v2, its matrix handles and codec. A plugin's main is

    import sys
    from lazyvi_plugin import serve
    from mybackend import MyBackend

    if __name__ == "__main__":
        sys.exit(serve(MyBackend()))

and Server serves a backend from a thread of a running process for
`vi estimate --plugin-attach` (the torch plugin's importance() does). See
docs/backends.md in the lazyvi repository, and examples/numpy_linear.py
beside this package, a complete backend in numpy.
"""

from .backend import BINARY, MULTICLASS, REGRESSION, Backend, Capabilities, FitReport, Model, ModelSpec, Option
from .errors import ModelError, RPCError, Unimplemented, UsageError
from .server import PROTOCOL_VERSION, Server, handshake, serve

__all__ = [
    "Backend", "Capabilities", "FitReport", "Model", "ModelSpec", "Option",
    "REGRESSION", "BINARY", "MULTICLASS",
    "ModelError", "RPCError", "Unimplemented", "UsageError",
    "PROTOCOL_VERSION", "Server", "handshake", "serve",
]
