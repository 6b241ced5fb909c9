"""The protocol version: the kit's is the one the .proto declares (its
package lazyvi.backend.vN), so that code generated from an older .proto
cannot go unnoticed; lazyvi's Go side checks its own the same way."""

import pathlib
import re

import pytest

from lazyvi_plugin import server
from lazyvi_plugin.pb import backend_pb2 as pb

PROTO = pathlib.Path(__file__).resolve().parents[3] / "proto" / "lazyvi" / "backend"


def test_version_is_the_protos():
    protos = sorted(PROTO.glob("v*/backend.proto"))
    assert len(protos) == 1, "want one version of the protocol under %s, found %s" % (PROTO, protos)
    m = re.search(r"^package lazyvi\.backend\.v([0-9]+);$", protos[0].read_text(), re.M)
    assert m, "%s: no line package lazyvi.backend.vN;" % protos[0]
    want = int(m.group(1))
    assert protos[0].parent.name == "v%d" % want
    assert pb.DESCRIPTOR.package == "lazyvi.backend.v%d" % want, "regenerate with plugins/python/gen.sh"
    assert server.PROTOCOL_VERSION == want


@pytest.mark.parametrize("package,want", [("lazyvi.backend.v2", 2), ("lazyvi.backend.v10", 10)])
def test_protocol_version(package, want):
    assert server.protocol_version(package) == want


@pytest.mark.parametrize("package", ["lazyvi.backend.v0", "lazyvi.backend.v", "lazyvi.backend", "other.backend.v2", "lazyvi.backend.v2x"])
def test_protocol_version_refuses(package):
    with pytest.raises(ValueError):
        server.protocol_version(package)
