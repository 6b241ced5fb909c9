"""The errors a backend call reports, and the gRPC codes they travel as
(backendplugin's toStatus: usage errors are INVALID_ARGUMENT, which lazyvi
turns back into framework.ErrUsage; other errors UNKNOWN)."""

import grpc


class UsageError(ValueError):
    """Bad input from the user (an option, a response): INVALID_ARGUMENT."""

    code = grpc.StatusCode.INVALID_ARGUMENT


class ModelError(RuntimeError):
    """A call the model cannot serve (not fitted, wrong shape): UNKNOWN."""

    code = grpc.StatusCode.UNKNOWN


class RPCError(Exception):
    """An error with an explicit gRPC code (cache miss, missing model)."""

    def __init__(self, code, msg):
        super().__init__(msg)
        self.code = code
