#!/bin/sh
# gpu-check.sh [OUTDIR]: the PyTorch plugin on an NVIDIA GPU.
#
# On a machine with an NVIDIA GPU and a CUDA build of torch, it records the
# GPU (nvidia-smi) and torch's view of it, runs the plugin's Python tests
# and lazyvi's conformance kit against the plugin on the GPU (device=
# defaults to cuda there), and times lazy against retrain on a large
# network (width 1024, n 50000) with vi bench data, writing every figure to
# OUTDIR (default ./gpu-figures). Without a GPU, or with a torch that sees
# none, it says so and exits 0.
#
# It needs go to build vi and the plugin's Go tests, unless VI and
# TORCH_TEST name them already built (go test -c ./plugins/torch), and
# python3 (or $PYTHON) with torch, grpcio, protobuf, numpy and pytest.
# N, WIDTH, EPOCHS and FEATURES change the timing's size.
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${1:-gpu-figures}"
py="${PYTHON:-python3}"
n="${N:-50000}"
width="${WIDTH:-1024}"
epochs="${EPOCHS:-20}"
features="${FEATURES:-2}"

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
	echo "gpu-check: no NVIDIA GPU (nvidia-smi finds none): skipped"
	exit 0
fi
if ! "$py" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
	echo "gpu-check: $py's torch sees no CUDA device (a CPU-only build?): skipped"
	exit 0
fi
mkdir -p "$out"
out="$(cd "$out" && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

nvidia-smi >"$out/nvidia-smi.txt"
"$py" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "available", torch.cuda.is_available(), "device", torch.cuda.get_device_name(0))' >"$out/torch.txt"
cat "$out/torch.txt"

vi="${VI:-}"
tests="${TORCH_TEST:-}"
if [ -z "$vi" ]; then
	(cd "$root" && go build -o "$tmp/vi" ./cmd/vi)
	vi="$tmp/vi"
fi
if [ -z "$tests" ]; then
	(cd "$root" && go test -c -o "$tmp/torch.test" ./plugins/torch)
	tests="$tmp/torch.test"
fi

# The plugin as vi runs it: the lazyvi-torch command, here this
# directory's sources.
mkdir "$tmp/bin"
printf '#!/bin/sh\nexec %s -m lazyvi_torch "$@"\n' "$py" >"$tmp/bin/lazyvi-torch"
chmod +x "$tmp/bin/lazyvi-torch"
PATH="$tmp/bin:$PATH"
PYTHONPATH="$here:$here/../python${PYTHONPATH:+:$PYTHONPATH}"
export PATH PYTHONPATH

status=0
echo "gpu-check: Python tests"
(cd "$here" && "$py" -m pytest -q -p no:cacheprovider) >"$out/pytest.txt" 2>&1 || status=1
tail -n 1 "$out/pytest.txt"

echo "gpu-check: conformance kit and transport checks on the GPU"
(cd "$here" && CI=true "$tests" -test.run '^(TestConformance|TestConformanceModule|TestTransportAdditions)$' -test.v) >"$out/conformance.txt" 2>&1 || status=1
grep -E '^(--- |ok|FAIL|PASS)' "$out/conformance.txt" | grep -v '^    ' | tail -n 8

echo "gpu-check: lazy and retrain, width $width, n $n, $epochs epochs at most, $features features"
"$vi" simulate --setting linear --n "$n" --out "$tmp/big.csv" >/dev/null
start=$(date +%s)
"$vi" bench data --data "$tmp/big.csv" --plugin "$tmp/bin/lazyvi-torch" --hidden "$width" --epochs "$epochs" \
	--features "$features" --estimators lazy,retrain --workers 1 >"$out/bench.txt" 2>"$out/bench.log" || status=1
echo "wall $(($(date +%s) - start)) s" >>"$out/bench.txt"
cat "$out/bench.txt"
exit $status
