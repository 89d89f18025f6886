#!/bin/bash
# rtid GPU kit: validate rtid on this machine's NVIDIA driver in one command,
# within 5 minutes, with nothing but this unpacked kit and the driver.
#
#   ./run.sh            (as root; OUT=DIR to choose where the report goes;
#                        NVCC=PATH, PYTHON=PATH where sudo's PATH lacks them)
#
# It records the machine, starts real CUDA processes (plain CUDA C built here
# with nvcc, PyTorch when present, threads that rename themselves and churn,
# a process without a CUDA context), asks each for its restore thread four
# ways (the real tool per spawn, rtid's api backend with one attach, rtid
# serve through the shim, the scan), cross-checks them, runs lock,
# checkpoint, restore and unlock through rtid serve on two processes
# checking their GPU memory before and after, dumps and restores one with
# CRIU when it can run here, and writes report.json, table.txt and rtid
# validate's attestation; the run's logs go to logs/.
# Exit: 0 all agreed and every cycle kept the data, 1 something disagreed or
# failed (the report says what), 77 no NVIDIA driver here.
#
# For the kit's own test without a GPU (never on a GPU machine):
# RTID_KIT_MOCK=1 starts kit-hold processes instead, RTID_KIT_VERSION_FILE,
# RTID_KIT_TOOL and RTID_KIT_LIBCUDA name the stand-ins, RTID_KIT_CRIU=1
# tries CRIU against them too.
set -uo pipefail
kit=$(cd "$(dirname "$0")" && pwd)
. "$kit/kit-lib.sh"
. "$kit/kit-criu.sh"
deadline=$(($(date +%s) + ${RTID_KIT_BUDGET:-285}))
stamp=$(date -u +%Y%m%dT%H%M%SZ)
out=${OUT:-$PWD/rtid-kit-$stamp}
version_file=${RTID_KIT_VERSION_FILE:-/proc/driver/nvidia/version}
mock=${RTID_KIT_MOCK:-}
python=${PYTHON:-python3}
work=$(mktemp -d "${TMPDIR:-/tmp}/rtid-kit.XXXXXX")
pids=()
daemon=""
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- the driver: its version file, else (a sandbox without /proc/driver)
# nvidia-smi's word; neither is no driver ---
driver=""
if [ -r "$version_file" ]; then
	driver=$(driver_version "$version_file")
elif [ -z "$mock" ] && command -v nvidia-smi > /dev/null; then
	driver=$(bounded 30 nvidia-smi --query-gpu=driver_version --format=csv,noheader 2> /dev/null | head -1)
	# rtid reads the version file; where there is none it is told.
	[ -n "$driver" ] && export RTID_DRIVER_VERSION=$driver
fi
if [ -z "$driver" ]; then
	say "rtid kit: no NVIDIA driver here ($version_file is missing and nvidia-smi says no version): nothing to validate"
	exit 77
fi
[ -n "$mock" ] && export RTID_DRIVER_VERSION=$driver
mkdir -p "$out" || exit 1
export RTID_WORKER=$kit/libexec/rtid-cuda-worker
rtid=$kit/bin/rtid
libcuda=${RTID_KIT_LIBCUDA:-libcuda.so.1}
nvcc=${NVCC:-$(command -v nvcc || true)}
[ -z "$nvcc" ] && [ -x /usr/local/cuda/bin/nvcc ] && nvcc=/usr/local/cuda/bin/nvcc

# --- the machine ---
tool=${RTID_KIT_TOOL:-}
if [ -z "$tool" ]; then
	tool=$(command -v cuda-checkpoint || true)
	[ -n "$tool" ] || tool=$kit/tool/cuda-checkpoint
fi
gpu=$(bounded 30 nvidia-smi --query-gpu=name --format=csv,noheader 2> /dev/null | head -1)
[ -n "$gpu" ] || gpu=$(sed -n 's/^Model:[[:space:]]*//p' /proc/driver/nvidia/gpus/*/information 2> /dev/null | head -1)
{
	printf 'driver_version_line\t%s\n' "$(head -1 "$version_file" 2> /dev/null || echo "none: from nvidia-smi")"
	printf 'driver\t%s\n' "$driver"
	printf 'driver_api_version\t%s\n' "$(api_version "$libcuda")"
	printf 'gpu\t%s\n' "${gpu:-unknown}"
	printf 'kernel\t%s\n' "$(uname -r)"
	printf 'proc_version\t%s\n' "$(head -c 200 /proc/version 2> /dev/null)"
	printf 'sandbox\t%s\n' "$(sandbox_of)"
	printf 'glibc\t%s\n' "$(getconf GNU_LIBC_VERSION 2> /dev/null)"
	printf 'tool\t%s\n' "$tool"
	printf 'tool_sha256\t%s\n' "$(sha256sum "$tool" 2> /dev/null | cut -d' ' -f1)"
	printf 'nvcc\t%s\n' "${nvcc:-none}"
	printf 'mock\t%s\n' "$mock"
	printf 'date\t%s\n' "$stamp"
} > "$work/machine.tsv"
say "rtid kit: driver $driver, GPU ${gpu:-unknown}, kernel $(uname -r), tool $tool"

# --- the processes: "pid kind expect file" lines (expect: cuda, none or any) ---
: > "$work/procs.tsv"
: > "$work/failures.tsv"
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
	# As NVML alone on 580.159.04: a restore thread without a CUDA context.
	start nvml-like any "$hold" --name cuda0000140000d
else
	# Built beside the kit, which may run programs (a TMPDIR may be noexec).
	hold=$kit/.build/gpu-hold
	mkdir -p "$kit/.build"
	if [ -z "$nvcc" ]; then
		printf 'start\tcuda-c\tno nvcc on PATH nor in /usr/local/cuda/bin (NVCC=PATH)\n' >> "$work/failures.tsv"
	elif ! bounded 120 "$nvcc" -O2 -I"$kit/src" -o "$hold" "$kit/src/gpu-hold.cu" 2> "$work/nvcc.err" &&
		! { grep -qi unsupported "$work/nvcc.err" &&
		    bounded 120 "$nvcc" -O2 -allow-unsupported-compiler -I"$kit/src" -o "$hold" \
			"$kit/src/gpu-hold.cu" 2>> "$work/nvcc.err"; }; then
		printf 'start\tcuda-c\tnvcc failed: %s\n' "$(grep -m1 -i error "$work/nvcc.err" | head -c 200 | tr '\t' ' ')" >> "$work/failures.tsv"
	fi
	if [ -x "$hold" ]; then
		start cuda-c cuda "$hold"
		start cuda-threads cuda "$hold" --threads 16
		start cuda-churn cuda "$hold" --threads 4 --churn
	fi
	if bounded 120 "$python" -c 'import torch; assert torch.cuda.is_available()' 2> "$work/torch.err"; then
		start pytorch cuda "$python" "$kit/src/torch-hold.py" 2
		start pytorch cuda "$python" "$kit/src/torch-hold.py" 8
		start pytorch cuda "$python" "$kit/src/torch-hold.py" 0
	else
		printf 'start\tpytorch\tno PyTorch with a GPU for %s (PYTHON=PATH)\n' "$python" >> "$work/failures.tsv"
	fi
	# Up to 7 CUDA processes, while the holders start (at most 4 more tries).
	for _ in 1 2 3 4; do
		[ "$(wc -l < "$work/procs.tsv")" -ge 7 ] || [ ! -x "$hold" ] && break
		start cuda-c cuda "$hold" || break
	done
	# The negative case: a process that loads no NVIDIA library at all.
	start no-cuda none "$python" -c 'import ctypes, os, signal
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)
print(os.getpid(), flush=True)
signal.sigwait({signal.SIGTERM})'
	# NVML without a CUDA context: on 580.159.04 nvmlInit already starts the
	# driver's restore thread (the tool answers a tid), so no answer is
	# expected there, only the same one four ways.
	start nvml-only any "$python" -c 'import ctypes, os, signal
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)
n = ctypes.CDLL("libnvidia-ml.so.1"); n.nvmlInit_v2(); print(os.getpid(), flush=True)
signal.sigwait({signal.SIGTERM})'
fi
cut -f1 "$work/procs.tsv" > "$work/pids"
all=$(tr '\n' ' ' < "$work/pids")
say "rtid kit: $(wc -l < "$work/pids") processes: $all"

# --- rtid serve, ready (its first attach done) before the first call ---
mkdir -p "$work/shim"
ln -sf "$rtid" "$work/shim/cuda-checkpoint"
sock=$work/rtid.sock
mkfifo "$work/ready"
"$rtid" serve --actions --socket "$sock" --libcuda "$libcuda" --action-timeout 60 \
	--ready-fd 3 3> "$work/ready" 2> "$work/serve.log" &
daemon=$!
ready=""
read -r -t "$(left)" ready < "$work/ready"
[ "$ready" = ready ] || say "rtid kit: rtid serve did not get ready (see logs/serve.log)"
# The shim, as CRIU runs it: the daemon first, the real tool after it.
shim() {
	RTID_SHIM_CONF= RTID_SOCKET=$sock RTID_REAL_TOOL=$tool RTID_SHIM_LOG=$work/shim.log \
		bounded 90 "$work/shim/cuda-checkpoint" "$@"
}

# --- four answers per process ---
answer_of() { # rc output -> tid | none | error:...
	if [ "$1" = 0 ] && [[ "$2" =~ ^[0-9]+$ ]]; then
		echo "$2"
	elif [ "$1" = 1 ] || [ "$1" = 3 ]; then
		echo none
	else
		echo "error:rc=$1"
	fi
}
: > "$work/shim.log"
: > "$work/answers.tsv"
while read -r pid; do
	t=$(now)
	o=$(bounded 60 "$tool" --get-restore-tid --pid "$pid" < /dev/null 2> "$work/tool-$pid.err")
	rc=$?
	tt=$(since "$t")
	t=$(now)
	s=$(shim --get-restore-tid --pid "$pid" < /dev/null 2> "$work/shim-$pid.err")
	src=$?
	st=$(since "$t")
	printf '%s\t%s\t%s\t%s\t%s\n' "$pid" "$(answer_of $rc "$o")" "$tt" "$(answer_of $src "$s")" "$st" >> "$work/answers.tsv"
done < "$work/pids"
t=$(now)
bounded 120 "$rtid" resolve --backend api --libcuda "$libcuda" --json $all > "$work/api.json" 2> "$work/api.err"
api_s=$(since "$t")
bounded 60 "$rtid" resolve --mode scan --unattested --tool "$tool" --json $all > "$work/scan.json" 2> "$work/scan.err"
bounded 120 "$rtid" validate --backend api --libcuda "$libcuda" --attestation "$out/attestation.json" \
	--report "$out/validate.json" $all > "$work/validate.txt" 2>&1
validate_rc=$?

# --- lock, checkpoint, restore, unlock on two processes, through the daemon ---
: > "$work/cycle.tsv"
awk -F'\t' '$3 == "cuda" { print $1 "\t" $4 }' "$work/procs.tsv" | head -2 > "$work/cycle-pids"
while IFS=$'\t' read -r pid f; do
	before=$(checksum "$pid" "$f")
	steps=""
	for step in "--get-state" "--action lock" "--get-state" "--action checkpoint" "--get-state" \
		"--action restore" "--get-state" "--action unlock" "--get-state"; do
		extra=""
		[ "$step" = "--action lock" ] && extra="--timeout 10000"
		o=$(shim $step --pid "$pid" $extra < /dev/null 2>> "$work/cycle.err")
		rc=$?
		if [ "$step" = "--get-state" ]; then steps="$steps ${o:-?}"; else steps="$steps rc=$rc"; fi
	done
	after=$(checksum "$pid" "$f")
	printf '%s\t%s\t%s\t%s\n' "$pid" "${steps# }" "$before" "$after" >> "$work/cycle.tsv"
done < "$work/cycle-pids"

# --- CRIU, when it can run here ---
criu_try

# The daemon's stop waits for an action it runs (at most --action-timeout);
# 10 s is more than a query needs.
stop "$daemon" 10 && daemon=""
cp "$work/serve.log" "$out/serve.log" 2> /dev/null
"$python" "$kit/report.py" "$work" "$out" "$api_s" "$validate_rc" "$criu_status" "$criu_ok"
rc=$?
cat "$out/table.txt"
say "rtid kit: report in $out"
exit $rc
