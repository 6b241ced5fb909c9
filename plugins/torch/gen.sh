#!/bin/sh
# Regenerates the committed gRPC code in lazyvi_torch/pb from
# ../../internal/pb/backend.proto (lazyvi's backend protocol) and proto/
# (go-plugin's stdio and controller services, gRPC's health service), with
# Debian's python3-grpc-tools:
#
#	apt-get install python3-grpc-tools && plugins/torch/gen.sh
#
# Run it after changing backend.proto and commit the result; nothing is
# generated at install time.
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/lazyvi_torch/pb"
cp "$here/../../internal/pb/backend.proto" "$here"/proto/*.proto "$tmp/lazyvi_torch/pb/"
cd "$tmp"
/usr/bin/python3 -m grpc_tools.protoc -I. --python_out=. --grpc_python_out=. lazyvi_torch/pb/*.proto
for f in lazyvi_torch/pb/*_pb2*.py; do
	cp "$f" "$here/$f"
done
