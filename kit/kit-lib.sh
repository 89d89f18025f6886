# The GPU kit's shell functions (sourced by run.sh): time, the machine's
# record, the holder processes, bounded calls and the cleanup. Bash.

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.4f", b - a }'; }
say() { printf '%s\n' "$*" >&2; }

# Seconds left of the run's budget (0: spent).
left() {
	local l=$((deadline - $(date +%s)))
	[ "$l" -gt 0 ] && echo "$l" || echo 0
}

# bounded SECONDS CMD...: CMD, killed when it outlasts SECONDS or what is
# left of the budget, whichever is less (exit 124 then; not run at all when
# the budget is spent). In the kit's own process group (--foreground), so
# that an interrupt of the kit reaches it. Without timeout(1) it runs
# unbounded.
bounded() {
	local s=$1 l
	shift
	l=$(left)
	[ "$s" -gt "$l" ] && s=$l
	[ "$s" -gt 0 ] || return 124
	if command -v timeout > /dev/null; then
		timeout --foreground -k 5 "$s" "$@"
	else
		"$@"
	fi
}

# Whether PID has ended: gone, or a zombie its parent (the kit) has not
# reaped yet (kill -0 still succeeds on those).
ended() {
	local st
	st=$(sed -n 's/^.*) \(.\).*/\1/p' "/proc/$1/stat" 2> /dev/null)
	[ -z "$st" ] || [ "$st" = Z ] || [ "$st" = X ]
}

# stop PID SECONDS: SIGTERM, up to SECONDS for it to end, then SIGKILL; the
# kit's own child is reaped only once it is gone (one stuck in the kernel,
# in an unkillable wait on a hung driver, would block wait for good).
stop() {
	local p=$1
	kill "$p" 2> /dev/null || { wait "$p" 2> /dev/null; return 0; }
	for _ in $(seq $(($2 * 10))); do
		ended "$p" && break
		sleep 0.1
	done
	kill -9 "$p" 2> /dev/null
	for _ in $(seq 20); do
		ended "$p" && { wait "$p" 2> /dev/null; return 0; }
		sleep 0.1
	done
	say "rtid kit: process $p does not end (stuck in the driver?): left as it is"
	return 1
}

# The driver's version: the first word of the version file's first line that
# is N.N or N.N.N, the rule rtid applies (the open kernel module's line says
# "for x86_64" before it).
driver_version() {
	head -1 "$1" | tr -s ' \t' '\n\n' | grep -m1 -E '^[0-9]+\.[0-9]+(\.[0-9]+)?$'
}

# "a.b" < "c.d" as versions.
version_lt() {
	[ "$1" != "$2" ] && [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | head -1)" = "$1" ]
}

# The kernel under /proc: Linux's, or gVisor's (its own kernel, its own /proc,
# a made-up release); what else it could be is not guessed.
sandbox_of() {
	if dmesg 2> /dev/null | grep -qi gvisor || grep -qi gvisor /proc/version 2> /dev/null; then
		echo gvisor
	elif [ -r /proc/self/task ] && [ -r /proc/self/stat ] && [ -r /proc/self/ns/pid ]; then
		echo none
	else
		echo "unknown (/proc lacks task, stat or ns)"
	fi
}

# cuDriverGetVersion of the driver library, as a number (13000 = 13.0), or
# "error N".
api_version() {
	python3 - "$1" <<'PY' 2> /dev/null || echo "error: cannot load $1"
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
v = ctypes.c_int(0)
r = lib.cuDriverGetVersion(ctypes.byref(v))
print(v.value if r == 0 else "error %d" % r)
PY
}

# start KIND EXPECT CMD...: a holder in the background; its pid line goes to
# procs.tsv once it prints it. Waited for while it lives, at most 90 s (a
# PyTorch start-up loads a lot) and never past the budget; one that dies or
# stays silent is a failure with its stderr.
start() {
	local kind=$1 expect=$2 f p w
	shift 2
	w=$(left)
	[ "$w" -gt 90 ] && w=90
	if [ "$w" -le 0 ]; then
		printf 'start\t%s\tnot started: the time budget is spent\n' "$kind" >> "$work/failures.tsv"
		return 1
	fi
	f=$work/p${#pids[@]}.out
	"$@" < /dev/null > "$f" 2> "$f.err" 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&- &
	p=$!
	pids+=("$p")
	for _ in $(seq $((w * 10))); do
		[ -s "$f" ] && break
		ended "$p" && break
		sleep 0.1
	done
	if [ -s "$f" ]; then
		printf '%s\t%s\t%s\t%s\n' "$(head -1 "$f")" "$kind" "$expect" "$f" >> "$work/procs.tsv"
		return 0
	fi
	say "rtid kit: $kind did not start: $(head -c 300 "$f.err")"
	printf 'start\t%s\t%s\n' "$kind" "$(head -c 200 "$f.err" | tr '\t\n' '  ')" >> "$work/failures.tsv"
	kill -9 "$p" 2> /dev/null
	return 1
}

# checksum PID FILE: the next "sum" line the holder writes after a SIGUSR1
# ("failed" when it could not take one, empty when it did not answer).
checksum() {
	local before w
	w=$(left)
	[ "$w" -gt 30 ] && w=30
	before=$(grep -c '^sum ' "$2")
	kill -USR1 "$1" 2> /dev/null || return
	for _ in $(seq $((w * 10))); do
		[ "$(grep -c '^sum ' "$2")" -gt "$before" ] && break
		sleep 0.1
	done
	[ "$(grep -c '^sum ' "$2")" -gt "$before" ] && grep '^sum ' "$2" | tail -1 | cut -d' ' -f2
}

# Each process gone and each log kept: the holders (and a process CRIU
# restored) and the daemon by SIGTERM, then SIGKILL after 5 s; each child
# reaped only once gone (never a wait that could block for good). The logs
# of the run go to OUT/logs, the rest of the work folder and the holder's
# build are removed.
cleanup() {
	local p alive
	for p in "${pids[@]}" $daemon; do kill "$p" 2> /dev/null; done
	for _ in $(seq 50); do
		alive=0
		for p in "${pids[@]}" $daemon; do ended "$p" || alive=1; done
		[ "$alive" = 0 ] && break
		sleep 0.1
	done
	for p in "${pids[@]}" $daemon; do kill -9 "$p" 2> /dev/null; done
	for p in "${pids[@]}" $daemon; do stop "$p" 1 > /dev/null 2>&1; done
	rm -rf "$kit/.build"
	if [ -d "$out" ]; then
		mkdir -p "$out/logs"
		for f in "$work"/*.err "$work"/*.log "$work"/*.out "$work"/*.txt "$work"/img/*.log; do
			[ -s "$f" ] && cp "$f" "$out/logs/" 2> /dev/null
		done
	fi
	rm -rf "$work"
}
