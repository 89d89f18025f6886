#!/bin/bash
# Validate rtid on a machine with an NVIDIA GPU and driver, in under 5 minutes:
# build, start a real CUDA process (PyTorch when present, else gpu-hold.cu via
# nvcc), cross-check it with the api backend (and the tool when cuda-checkpoint
# is installed), lock/checkpoint/restore/unlock it through the driver API, and
# cross-check again. Prints a table; writes reports to $OUT when set.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-$(mktemp -d)}
work=$(mktemp -d)
holder=""
cleanup() { [ -n "$holder" ] && kill "$holder" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

[ -e /proc/driver/nvidia/version ] || { echo "gpu-validate: no NVIDIA driver here" >&2; exit 77; }
head -1 /proc/driver/nvidia/version
meson setup build-gpu >/dev/null 2>&1 || true
ninja -C build-gpu >/dev/null
export RTID_WORKER=$PWD/build-gpu/src/rtid-cuda-worker
rtid=$PWD/build-gpu/src/rtid
gcc -O2 -o "$work/cuda-cycle" scripts/cuda-cycle.c -ldl

# A real CUDA process that prints its pid when its context is up.
if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
	python3 -c 'import os,sys,torch; x=torch.ones(1<<26,device="cuda"); torch.cuda.synchronize();
print(os.getpid(),flush=True); sys.stdin.read()' > "$work/pid" < <(sleep 600) &
	kind=pytorch
else
	nvcc -O2 -o "$work/gpu-hold" scripts/gpu-hold.cu
	"$work/gpu-hold" > "$work/pid" &
	kind=cuda-c
fi
holder=$!
for _ in $(seq 600); do [ -s "$work/pid" ] && break; sleep 0.1; done
pid=$(head -1 "$work/pid")
echo "CUDA process ($kind): pid $pid"

att="$out/attestation.json"
run() { # label, extra args
	local label=$1; shift
	local t0=$(date +%s.%N)
	"$rtid" validate --attestation "$att" --report "$out/report-$label.json" "$@" "$pid" || true
	printf '%-28s %6.2f s\n' "$label" "$(echo "$(date +%s.%N) - $t0" | bc)"
}
echo "--- validate ---"
run api-before --backend api
if command -v cuda-checkpoint >/dev/null; then run tool-before --backend tool; fi
echo "--- lock / checkpoint / restore / unlock (driver API) ---"
"$work/cuda-cycle" "$pid" | tee "$out/cycle.txt"
echo "--- validate again ---"
run api-after --backend api
if command -v cuda-checkpoint >/dev/null; then run tool-after --backend tool; fi
"$rtid" resolve --json --mode crosscheck --backend api "$pid" | tee "$out/resolve.json"
"$rtid" attest show "$att"
echo "reports in $out"
