#!/bin/sh
# Regenerates the committed gRPC code in lazyvi_plugin/pb from
# ../../proto/lazyvi/backend/v2/backend.proto (lazyvi's backend protocol) and proto/
# (go-plugin's stdio and controller services, gRPC's health service): the
# messages with protoc (Debian's protobuf-compiler, 3.21.12, whose code runs
# on protobuf 3.20 and every later runtime, upb included), the services with
# Debian's python3-grpc-tools:
#
#	apt-get install protobuf-compiler python3-grpc-tools && plugins/python/gen.sh
#
# Run it after changing backend.proto and commit the result; nothing is
# generated at install time.
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/lazyvi_plugin/pb"
cp "$here/../../proto/lazyvi/backend/v2/backend.proto" "$here"/proto/*.proto "$tmp/lazyvi_plugin/pb/"
cd "$tmp"
# google/protobuf/empty.proto (grpc_stdio.proto's import) from grpc-tools.
wkt="$(/usr/bin/python3 -c 'import grpc_tools, os; print(os.path.join(os.path.dirname(grpc_tools.__file__), "_proto"))')"
protoc -I. -I"$wkt" --python_out=. lazyvi_plugin/pb/*.proto
/usr/bin/python3 -m grpc_tools.protoc -I. --grpc_python_out=. lazyvi_plugin/pb/*.proto
for f in lazyvi_plugin/pb/*_pb2*.py; do
	cp "$f" "$here/$f"
done
