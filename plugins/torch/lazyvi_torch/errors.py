"""The errors a backend call reports: the kit's (lazyvi_plugin.errors),
which travel as their gRPC codes."""

from lazyvi_plugin.errors import ModelError, RPCError, Unimplemented, UsageError

__all__ = ["ModelError", "RPCError", "Unimplemented", "UsageError"]
