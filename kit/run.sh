#!/bin/bash
# rtid GPU kit: validate rtid on this machine's NVIDIA driver in one command,
# within 5 minutes, with nothing but this unpacked kit and the driver.
#
#   ./run.sh            (as root; OUT=DIR to choose where the report goes)
#
# It records the machine, starts real CUDA processes (plain CUDA C built here
# with nvcc, PyTorch when present, threads that rename themselves and churn,
# a process without a CUDA context), asks each for its restore thread four
# ways (the real tool per spawn, rtid's api backend with one attach, rtid
# serve through the shim, the scan), cross-checks them, runs lock,
# checkpoint, restore and unlock through rtid serve on two processes
# checking their GPU memory before and after, tries CRIU when it can run,
# and writes report.json, table.txt and rtid validate's attestation.
# Exit: 0 all agreed and the cycle kept the data, 1 something disagreed or
# failed (the report says what), 77 no NVIDIA driver here.
#
# For the kit's own test without a GPU (never on a GPU machine):
# RTID_KIT_MOCK=1 starts kit-hold processes instead, RTID_KIT_VERSION_FILE,
# RTID_KIT_TOOL and RTID_KIT_LIBCUDA name the stand-ins.
set -uo pipefail
kit=$(cd "$(dirname "$0")" && pwd)
stamp=$(date -u +%Y%m%dT%H%M%SZ)
out=${OUT:-$PWD/rtid-kit-$stamp}
version_file=${RTID_KIT_VERSION_FILE:-/proc/driver/nvidia/version}
mock=${RTID_KIT_MOCK:-}
work=$(mktemp -d "${TMPDIR:-/tmp}/rtid-kit.XXXXXX")
pids=()
daemon=""

cleanup() {
	for p in "${pids[@]}" $daemon; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.4f", b - a }'; }
say() { printf '%s\n' "$*" >&2; }

if [ ! -r "$version_file" ]; then
	say "rtid kit: no NVIDIA driver here ($version_file is missing): nothing to validate"
	exit 77
fi
mkdir -p "$out" || exit 1
export RTID_WORKER=$kit/libexec/rtid-cuda-worker
rtid=$kit/bin/rtid
driver=$(sed -n 's/.*Kernel Module[^0-9]*\([0-9][0-9.]*\).*/\1/p' "$version_file" | head -1)
export RTID_DRIVER_VERSION=$driver
libcuda=${RTID_KIT_LIBCUDA:-libcuda.so.1}

# --- the machine ---
tool=${RTID_KIT_TOOL:-}
if [ -z "$tool" ]; then
	tool=$(command -v cuda-checkpoint || true)
	[ -n "$tool" ] || tool=$kit/tool/cuda-checkpoint
fi
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
[ -n "$gpu" ] || gpu=$(sed -n 's/^Model:[[:space:]]*//p' /proc/driver/nvidia/gpus/*/information 2>/dev/null | head -1)
{
	printf 'driver_version_line\t%s\n' "$(head -1 "$version_file")"
	printf 'driver\t%s\n' "$driver"
	printf 'gpu\t%s\n' "${gpu:-unknown}"
	printf 'kernel\t%s\n' "$(uname -r)"
	printf 'proc_is_linux\t%s\n' "$([ -r /proc/self/task ] && [ -r /proc/self/stat ] && echo yes || echo no)"
	printf 'tool\t%s\n' "$tool"
	printf 'tool_sha256\t%s\n' "$(sha256sum "$tool" 2>/dev/null | cut -d' ' -f1)"
	printf 'mock\t%s\n' "${mock:-}"
	printf 'date\t%s\n' "$stamp"
} > "$work/machine.tsv"
say "rtid kit: driver $driver, GPU ${gpu:-unknown}, kernel $(uname -r), tool $tool"

# --- the processes: "pid kind expect" lines (expect: cuda or none) ---
start() { # kind expect command...
	local kind=$1 expect=$2 f
	shift 2
	f=$work/p${#pids[@]}.out
	"$@" < /dev/null > "$f" 2> "$f.err" &
	pids+=($!)
	for _ in $(seq 1200); do [ -s "$f" ] && break; sleep 0.05; done
	if [ -s "$f" ]; then
		printf '%s\t%s\t%s\t%s\n' "$(head -1 "$f")" "$kind" "$expect" "$f" >> "$work/procs.tsv"
	else
		say "rtid kit: $kind did not start: $(head -c 300 "$f.err")"
		printf 'start\t%s\t%s\n' "$kind" "$(head -c 200 "$f.err" | tr '\t\n' '  ')" >> "$work/failures.tsv"
	fi
}
: > "$work/procs.tsv"; : > "$work/failures.tsv"
if [ -n "$mock" ]; then
	hold=$kit/bin/kit-hold
	start plain cuda "$hold" --name cuda00001400006
	start plain cuda "$hold" --name cuda00001400007
	start threads cuda "$hold" --threads 8 --name cuda00001400008
	start threads cuda "$hold" --threads 32 --name cuda00001400009
	start churn cuda "$hold" --threads 4 --churn --name cuda0000140000a
	start churn cuda "$hold" --threads 16 --churn --name cuda0000140000b
	start plain cuda "$hold" --name cuda0000140000c
	start no-context none "$hold" --threads 2
else
	if command -v nvcc > /dev/null; then
		nvcc -O2 -I"$kit/src" -o "$work/gpu-hold" "$kit/src/gpu-hold.cu" 2> "$work/nvcc.err" ||
			say "rtid kit: nvcc failed: $(head -c 300 "$work/nvcc.err")"
	fi
	if [ -x "$work/gpu-hold" ]; then
		start cuda-c cuda "$work/gpu-hold"
		start cuda-c cuda "$work/gpu-hold"
		start cuda-threads cuda "$work/gpu-hold" --threads 16
		start cuda-churn cuda "$work/gpu-hold" --threads 4 --churn
	fi
	if python3 -c 'import torch; assert torch.cuda.is_available()' 2> /dev/null; then
		start pytorch cuda python3 "$kit/src/torch-hold.py" 2
		start pytorch cuda python3 "$kit/src/torch-hold.py" 8
		start pytorch cuda python3 "$kit/src/torch-hold.py" 0
	fi
	while [ "$(wc -l < "$work/procs.tsv")" -lt 7 ] && [ -x "$work/gpu-hold" ]; do
		start cuda-c cuda "$work/gpu-hold"
	done
	# The negative case: a process that loads NVML but makes no CUDA context.
	start nvml-only none python3 -c 'import ctypes, os, signal
n = ctypes.CDLL("libnvidia-ml.so.1"); n.nvmlInit_v2(); print(os.getpid(), flush=True)
signal.sigwait({signal.SIGTERM})'
fi
cut -f1 "$work/procs.tsv" > "$work/pids"
all=$(tr '\n' ' ' < "$work/pids")
say "rtid kit: $(wc -l < "$work/pids") processes: $all"

# --- four answers per process ---
answer_of() { # rc output -> tid | none | error:...
	if [ "$1" = 0 ] && [[ "$2" =~ ^[0-9]+$ ]]; then echo "$2"
	elif [ "$1" = 1 ] || [ "$1" = 3 ]; then echo none
	else echo "error:rc=$1"; fi
}
mkdir -p "$work/shim"
ln -sf "$rtid" "$work/shim/cuda-checkpoint"
sock=$work/rtid.sock
"$rtid" serve --actions --socket "$sock" --libcuda "$libcuda" 2> "$out/serve.log" &
daemon=$!
for _ in $(seq 600); do [ -S "$sock" ] && break; sleep 0.05; done
# The shim, as CRIU runs it: the daemon first, the real tool after it.
shim() { RTID_SHIM_CONF= RTID_SOCKET=$sock RTID_REAL_TOOL=$tool RTID_SHIM_LOG=$work/shim.log "$work/shim/cuda-checkpoint" "$@"; }
: > "$work/shim.log"
: > "$work/answers.tsv"
while read -r pid; do
	t=$(now); o=$("$tool" --get-restore-tid --pid "$pid" < /dev/null 2> /dev/null); rc=$?; tt=$(since "$t")
	t=$(now); s=$(shim --get-restore-tid --pid "$pid" < /dev/null 2> /dev/null); src=$?; st=$(since "$t")
	printf '%s\t%s\t%s\t%s\t%s\n' "$pid" "$(answer_of $rc "$o")" "$tt" "$(answer_of $src "$s")" "$st" >> "$work/answers.tsv"
done < "$work/pids"
t=$(now)
"$rtid" resolve --backend api --libcuda "$libcuda" --json $all > "$work/api.json" 2> "$work/api.err"
api_s=$(since "$t")
"$rtid" resolve --mode scan --unattested --tool "$tool" --json $all > "$work/scan.json" 2> "$work/scan.err"
"$rtid" validate --backend api --libcuda "$libcuda" --attestation "$out/attestation.json" \
	--report "$out/validate.json" $all > "$work/validate.out" 2>&1
validate_rc=$?

# --- lock, checkpoint, restore, unlock on two processes, through the daemon ---
checksum() { # pid file -> the next "sum" line after a SIGUSR1
	local before
	before=$(grep -c '^sum ' "$2")
	kill -USR1 "$1" 2> /dev/null || return
	for _ in $(seq 600); do
		[ "$(grep -c '^sum ' "$2")" -gt "$before" ] && break
		sleep 0.05
	done
	grep '^sum ' "$2" | tail -1 | cut -d' ' -f2
}
: > "$work/cycle.tsv"
awk -F'\t' '$3 == "cuda" { print $1 "\t" $4 }' "$work/procs.tsv" | head -2 |
while IFS=$'\t' read -r pid f; do
	before=$(checksum "$pid" "$f")
	steps=""
	for step in "--get-state" "--action lock" "--get-state" "--action checkpoint" "--get-state" \
		"--action restore" "--get-state" "--action unlock" "--get-state"; do
		extra=""; [ "$step" = "--action lock" ] && extra="--timeout 10000"
		o=$(shim $step --pid "$pid" $extra < /dev/null 2>&1); rc=$?
		[ "$step" = "--get-state" ] && steps="$steps ${o:-?}" || steps="$steps rc=$rc"
	done
	after=$(checksum "$pid" "$f")
	printf '%s\t%s\t%s\t%s\n' "$pid" "${steps# }" "$before" "$after" >> "$work/cycle.tsv"
done

# --- CRIU, when it can run here ---
criu_status="not run: the kit carries no CRIU"
if [ -n "$mock" ] && [ -z "${RTID_KIT_CRIU:-}" ]; then
	criu_status="not run: mock mode"
elif [ -x "$kit/criu/criu" ]; then
	if LD_LIBRARY_PATH=$kit/criu/lib "$kit/criu/criu" check > "$work/criu-check.txt" 2>&1; then
		criu_status="criu check passed; dump and restore not attempted by this kit"
	else
		criu_status="not run: criu check failed: $(tail -1 "$work/criu-check.txt" | head -c 200)"
	fi
fi

kill "$daemon" 2> /dev/null; wait "$daemon" 2> /dev/null; daemon=""
python3 "$kit/report.py" "$work" "$out" "$api_s" "$validate_rc" "$criu_status"
rc=$?
cat "$out/table.txt"
say "rtid kit: report in $out"
exit $rc
