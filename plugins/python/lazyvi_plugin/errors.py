"""The errors a backend call reports, and the gRPC codes they travel as
(lazyvi's backendplugin: INVALID_ARGUMENT becomes framework.ErrUsage on
lazyvi's side, UNIMPLEMENTED a capability the model lacks, anything else
UNKNOWN with the error's text)."""

import grpc


class UsageError(ValueError):
    """Bad input from the user (an option, a response): INVALID_ARGUMENT."""

    code = grpc.StatusCode.INVALID_ARGUMENT


class ModelError(RuntimeError):
    """A call the model cannot serve (not fitted, wrong shape): UNKNOWN."""

    code = grpc.StatusCode.UNKNOWN


class Unimplemented(NotImplementedError):
    """A method the model does not have: UNIMPLEMENTED."""

    code = grpc.StatusCode.UNIMPLEMENTED


class RPCError(Exception):
    """An error with an explicit gRPC code (cache miss, missing model)."""

    def __init__(self, code, msg):
        super().__init__(msg)
        self.code = code
