"""Serving a Backend to lazyvi: as a plugin process that lazyvi starts
(serve), or from a thread of a running Python process that lazyvi attaches
to (Server, `vi estimate --plugin-attach`).

go-plugin (github.com/hashicorp/go-plugin, docs/guide-plugin-write-non-go.md)
asks a plugin in another language to
  - refuse to run unless the magic cookie is in its environment;
  - serve gRPC and print "CORE|APP|NETWORK|ADDR|grpc" as its first line on
    stdout, CORE = 1, APP = the application's protocol version (lazyvi's
    backendplugin.ProtocolVersion);
  - serve the health service with "plugin" SERVING (lazyvi's watchdog asks
    it while calls are in flight, and gives up on a plugin that stops
    answering);
and uses, when present, GRPCController.Shutdown to end the plugin gracefully
and GRPCStdio to forward its output. Everything a plugin process writes
after the handshake goes to stderr, which lazyvi passes on, so GRPCStdio
streams nothing.

An attached server speaks the same services; its handshake line is what
`vi --plugin-attach` takes, and lazyvi never shuts it down (the process
that serves it does, with Server.stop).
"""

import os
import shutil
import signal
import socket
import sys
import tempfile
import threading
import time
from concurrent import futures
from typing import Optional

import grpc

from .backend import Backend
from .pb import backend_pb2 as pb
from .pb import backend_pb2_grpc
from .pb import grpc_controller_pb2, grpc_controller_pb2_grpc, grpc_stdio_pb2_grpc, health_pb2, health_pb2_grpc
from .service import BackendService


def protocol_version(package: str) -> int:
    """N of a proto package name lazyvi.backend.vN (N > 0); a ValueError
    otherwise."""
    prefix = "lazyvi.backend.v"
    v = package[len(prefix):] if package.startswith(prefix) else ""
    if not v.isdigit() or int(v) <= 0:
        raise ValueError("proto package %r: want lazyvi.backend.vN" % package)
    return int(v)


# The handshake of lazyvi's backendplugin.Handshake.
COOKIE_KEY = "LAZYVI_BACKEND_PLUGIN"
COOKIE_VALUE = "d9c1c5c2-0f4e-4d55-9a3e-lazyvi-backend"
# The protocol's version: N of the proto package lazyvi.backend.vN that the
# code in pb was generated from, as lazyvi reads it
# (backendplugin.ProtocolVersion).
PROTOCOL_VERSION = protocol_version(pb.DESCRIPTOR.package)

# Threads serving calls (created as needed): more than lazyvi has in flight
# at its usual --workers, so that a health check never queues behind long
# Fits (the watchdog gives up on a plugin that does not answer it for 30 s).
WORKERS = 256

MAX_MESSAGE = 2 ** 31 - 1


class Health(health_pb2_grpc.HealthServicer):
    def Check(self, request, context):
        return health_pb2.HealthCheckResponse(status=health_pb2.HealthCheckResponse.SERVING)


class Stdio(grpc_stdio_pb2_grpc.GRPCStdioServicer):
    def StreamStdio(self, request, context):
        return iter(())


class Controller(grpc_controller_pb2_grpc.GRPCControllerServicer):
    def __init__(self, stop: threading.Event) -> None:
        self.stop = stop

    def Shutdown(self, request, context):
        self.stop.set()
        return grpc_controller_pb2.Empty()


def _grpc_server(backend: Backend, stop: Optional[threading.Event]) -> grpc.Server:
    """A gRPC server with the Backend, health and stdio services, and with
    stop the controller whose Shutdown sets it."""
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=WORKERS),
                         options=[("grpc.max_receive_message_length", MAX_MESSAGE),
                                  ("grpc.max_send_message_length", MAX_MESSAGE)])
    backend_pb2_grpc.add_BackendServicer_to_server(BackendService(backend), server)
    health_pb2_grpc.add_HealthServicer_to_server(Health(), server)
    grpc_stdio_pb2_grpc.add_GRPCStdioServicer_to_server(Stdio(), server)
    if stop is not None:
        grpc_controller_pb2_grpc.add_GRPCControllerServicer_to_server(Controller(stop), server)
    return server


def handshake(network: str, addr: str) -> str:
    """go-plugin's handshake line for a gRPC server at addr on network
    (tcp or unix), without its newline."""
    return "1|%d|%s|%s|grpc" % (PROTOCOL_VERSION, network, addr)


class Server:
    """backend served from threads of this process until stop, for lazyvi
    to attach to: `vi estimate --plugin-attach LINE`, LINE the handshake
    attribute. It listens on a Unix socket in a private temporary
    directory (only this user can reach it) where the platform has them,
    else on a loopback TCP port. A context manager: with Server(b) as s."""

    def __init__(self, backend: Backend) -> None:
        self._server = _grpc_server(backend, None)
        self._dir = None
        if hasattr(socket, "AF_UNIX"):
            self._dir = tempfile.mkdtemp(prefix="lazyvi-plugin-")
            path = os.path.join(self._dir, "backend.sock")
            self._server.add_insecure_port("unix:" + path)
            self.handshake = handshake("unix", path)
        else:
            port = self._server.add_insecure_port("127.0.0.1:0")
            self.handshake = handshake("tcp", "127.0.0.1:%d" % port)
        self._server.start()

    def stop(self) -> None:
        """Stops serving (calls in flight are cancelled) and removes the
        socket's directory."""
        self._server.stop(None).wait(5)
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    def __enter__(self) -> "Server":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def _watch_parent(parent: int, stop: threading.Event) -> None:
    """Exits when the process that started this one (lazyvi), pid parent, is
    gone: this process is then re-parented, and nothing of it must outlive
    lazyvi."""
    while not stop.is_set():
        if os.getppid() != parent:
            os._exit(1)
        time.sleep(0.5)


def serve(backend: Backend, command: str = "vi estimate --plugin PLUGIN") -> int:
    """Serves backend as a plugin process until lazyvi shuts it down or
    goes away, then ends the process; run by hand (without the handshake
    cookie) it says it is a plugin, naming command as how to use it, and
    returns 1. Nothing may write to stdout before it: the handshake line
    goes there."""
    if os.environ.get(COOKIE_KEY) != COOKIE_VALUE:
        sys.stderr.write("This binary is a plugin. These are not meant to be executed directly.\n"
                         "Please execute the program that consumes these plugins, which will\n"
                         "load any plugins automatically (%s).\n" % command)
        return 1
    parent = os.getppid()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # lazyvi handles ^C, then ends the plugin
    stop = threading.Event()
    server = _grpc_server(backend, stop)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    os.write(1, (handshake("tcp", "127.0.0.1:%d" % port) + "\n").encode())
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    threading.Thread(target=_watch_parent, args=(parent, stop), daemon=True).start()
    stop.wait()
    server.stop(None).wait(1)
    sys.stderr.flush()
    # Straight out: the interpreter's own shutdown (a framework's, the
    # thread pool's) can outlast go-plugin's 2 s grace for a graceful exit.
    os._exit(0)
