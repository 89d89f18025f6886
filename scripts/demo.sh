#!/bin/sh
# rtid without a GPU, in one command (make demo): a stand-in CUDA process,
# rtid serve on the mock driver, the cuda-checkpoint shim asking it, then
# (as root, where CRIU with its CUDA plugin is) a real CRIU dump and restore
# of that process through the shim and the daemon, then (where runc or
# Podman are) the same for a container, and rtid serve status. Every step is
# printed with who answered; what cannot run here is skipped with the reason.
# Everything lives in one temporary directory, removed at the end with every
# process the demo started; the node's own /run/rtid, /etc/rtid and
# /var/lib/rtid are never read or written.
#
#   demo.sh BUILD_DIR
#
# Exit status: 0; 77 when not even the first part can run (or, with
# RTID_DEMO_TEST=1, as make check runs it, when the CRIU part could not); 1
# when a step failed, or under RTID_REQUIRE_CRIU=1 when CRIU is here but its
# part could not run. RTID_DEMO_ENGINES=0 leaves the containers out (the
# engine suite runs them).
set -eu
build=${1:-build}
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$build" && pwd)
rtid=$build/src/rtid
task=$build/tests/criu/criu-task
mock=$build/mocks/libmockcuda.so
criu_dir=${RTID_CRIU_DIR:-$src/../shared/tools/criu}

step() { printf '\n== %s\n' "$*"; }
say() { printf '   %s\n' "$*"; }
skip() { printf '   skipped: %s\n' "$*"; }
fail() {
	echo "demo: FAIL: $*" >&2
	for f in "$T/serve.log" "$T/shim.log" "$T/img/dump.log" "$T/img/restore.log"; do
		[ -f "$f" ] && { echo "--- $f" >&2; tail -n 20 "$f" >&2; }
	done
	exit 1
}
for f in "$rtid" "$task" "$mock"; do
	[ -e "$f" ] || { echo "demo: skipped: $f is not built (run make first)"; exit 77; }
done

T=$(mktemp -d /tmp/rtid-demo-XXXXXX)
pids=""
cleanup() {
	rc=$?
	set +e
	for p in $pids; do kill -9 "$p" 2> /dev/null; done
	for p in $pids; do wait "$p" 2> /dev/null; done
	rm -rf "$T"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

echo "rtid demo: everything under $T, removed at the end."
echo "Needs: the build. For CRIU: root and CRIU 4.1+ with its CUDA plugin ($criu_dir);"
echo "for containers also runc or podman, busybox-static and unshare (a mount namespace)."

step "the node, in $T: the shim (cuda-checkpoint -> rtid), its settings, a stand-in real tool"
mkdir -p "$T/bin" "$T/real" "$T/state"
ln -s "$rtid" "$T/bin/cuda-checkpoint"
# The real tool's stand-in records its calls: every call it sees is one
# rtid did not answer.
# It knows -h, which CRIU's plugin runs to see that the tool is there.
cat > "$T/real/cuda-checkpoint" << 'EOF'
#!/bin/sh
printf '%s\n' "$*" >> "$(dirname "$0")/calls"
case "${1:-}" in
-h|--help) echo "Usage: cuda-checkpoint [--action lock|checkpoint|restore|unlock] --pid PID"; exit 0 ;;
esac
echo "the real tool's stand-in was called (no GPU here)" >&2
exit 1
EOF
chmod 755 "$T/real/cuda-checkpoint"
cat > "$T/shim.conf" << EOF
RTID_SOCKET=$T/rtid.sock
RTID_REAL_TOOL=$T/real/cuda-checkpoint
RTID_SHIM_LOG=$T/shim.log
EOF
# Every rtid below reads these, never the node's defaults.
export RTID_SHIM_CONF="$T/shim.conf" RTID_SOCKET="$T/rtid.sock" \
	RTID_ATTESTATION="$T/attestation.json"
unset RTID_REAL_TOOL RTID_SHIM_LOG
sed 's/^/   /' "$T/shim.conf"

step "a stand-in CUDA process: threads, one named like the driver's restore thread"
mkfifo "$T/task.fifo"
"$task" 3> "$T/task.fifo" &
pids="$pids $!"
# (timeout: a stand-in that never opened the FIFO must not hang the demo)
line=$(timeout 30 head -n 1 "$T/task.fifo") || true
pid=${line%% *} rest=${line#* }
tid=${rest%% *}
[ -n "$line" ] && [ "$pid" != "$line" ] || fail "the stand-in did not start"
say "pid $pid, restore thread $tid ($(cat "/proc/$pid/task/$tid/comm"))"

step "rtid serve --actions on the mock driver (libmockcuda: the thread so named is the restore thread)"
printf 'title demo\nproves demo\ndriver 580.95.05\nbackend api\ntask 1 1 init\nanswer 1 none\nexpect driver 1 tid=none\n' \
	> "$T/demo.case"
mkfifo "$T/ready"
env RTID_MOCK_BY_NAME=1 RTID_CASE="$T/demo.case" RTID_MOCK_STATE="$T/state" \
	RTID_MOCK_LOG="$T/driver.log" "$rtid" serve --socket "$T/rtid.sock" --actions \
	--libcuda "$mock" --ready-fd 3 3> "$T/ready" 2> "$T/serve.log" &
pids="$pids $!"
[ "$(timeout 30 cat "$T/ready")" = ready ] || fail "rtid serve did not start"
say "serving on $T/rtid.sock; its log:"
sed 's/^/     /' "$T/serve.log"

# Who answered the latest call: the shim's log says.
answered() { tail -n 1 "$T/shim.log" | sed 's/^[^ ]* [0-9]*: /   who answered: /'; }

step "cuda-checkpoint --get-restore-tid --pid $pid (as CRIU's plugin calls it)"
out=$("$T/bin/cuda-checkpoint" --get-restore-tid --pid "$pid") || fail "the shim failed"
say "printed: $out"
answered
[ "$out" = "$tid" ] || fail "the shim printed $out, not $tid"
step "cuda-checkpoint --get-state --pid $pid"
say "printed: $("$T/bin/cuda-checkpoint" --get-state --pid "$pid")"
answered

crit=""
step "CRIU: dump and restore of the stand-in through the shim and rtid serve"
if [ "$(id -u)" != 0 ]; then
	crit="needs root (CRIU dumps with ptrace and restores pids)"
elif ! [ -x "$criu_dir/criu" ] || ! [ -f "$criu_dir/cuda_plugin.so" ]; then
	crit="no CRIU with its CUDA plugin in $criu_dir (set RTID_CRIU_DIR)"
fi
if [ -n "$crit" ]; then
	skip "$crit"
else
	mkdir -p "$T/img" "$T/plugins"
	ln -s "$(readlink -f "$criu_dir/cuda_plugin.so")" "$T/plugins/cuda_plugin.so"
	path=$T/bin:/usr/sbin:/usr/bin:/sbin:/bin
	# CRIU_FAULT=138: the plugin acts without /proc/driver/nvidia/gpus (no
	# GPU here), as CRIU's own CI runs it.
	say "criu dump -t $pid --shell-job -L $T/plugins (PATH starts with the shim)"
	env PATH="$path" CRIU_FAULT=138 "$criu_dir/criu" dump -t "$pid" -D "$T/img" --shell-job \
		-L "$T/plugins" -v4 -o dump.log < /dev/null > "$T/criu.out" 2>&1 ||
		{ [ "${RTID_REQUIRE_CRIU:-0}" = 1 ] && fail "criu dump failed"; crit="criu dump failed"; }
	if [ -z "$crit" ]; then
		wait "$pid" 2> /dev/null || true
		grep -h "Checkpointing CUDA devices on pid" "$T/img/dump.log" | sed 's/^.*Check/   CRIU: Check/'
		say "criu restore -d"
		env PATH="$path" CRIU_FAULT=138 "$criu_dir/criu" restore -D "$T/img" --shell-job \
			-L "$T/plugins" -v4 -o restore.log -d < /dev/null > "$T/criu.out" 2>&1 ||
			fail "criu restore failed"
		grep -h "Restore thread pid" "$T/img/restore.log" | sed 's/^.*Restore/   CRIU: Restore/'
		[ -d "/proc/$pid" ] && pids="$pids $pid"
		say "the shim's log of CRIU's calls:"
		grep -E "answered by|to the real tool" "$T/shim.log" | tail -n 7 | sed 's/^[^ ]* [0-9]*: /     /'
		! grep -v '^-h$' "$T/real/calls" 2> /dev/null ||
			fail "the real tool was called for the calls above"
		grep -qF ": checkpoint --pid $pid: answered by rtid serve" "$T/shim.log" ||
			fail "CRIU's checkpoint of $pid was not answered by rtid serve"
		say "the real tool saw -h only: rtid serve answered every call about the process"
	else
		skip "$crit (see above)"
	fi
fi

step "containers: runc and Podman through the shim and rtid serve (tests/engine)"
if [ "${RTID_DEMO_ENGINES:-1}" = 0 ]; then
	skip "RTID_DEMO_ENGINES=0"
elif [ -n "$crit" ]; then
	skip "$crit"
elif ! [ -x "$build/src/rtid-static" ] || ! [ -x "$build/tests/criu/engine-task" ]; then
	skip "no self-contained rtid or static stand-in in $build"
else
	for engine in runc podman; do
		if ! command -v "$engine" > /dev/null; then
			skip "$engine is not installed (apt-get install $engine)"
			continue
		fi
		say "$engine: a busybox container with the stand-in, checkpointed and restored"
		rc=0
		env RTID_BIN="$rtid" RTID_STATIC="$build/src/rtid-static" MOCK_LIBCUDA="$mock" \
			ENGINE_TASK="$build/tests/criu/engine-task" RTID_SOURCE_ROOT="$src" \
			RTID_CRIU_DIR="$criu_dir" sh "$src/tests/engine/engine.sh" "$engine" \
			> "$T/engine.out" 2>&1 || rc=$?
		sed 's/^/     /' "$T/engine.out" | tail -n 3
		[ "$rc" = 0 ] || [ "$rc" = 77 ] || fail "$engine: the engine test failed"
	done
fi

step "rtid serve status"
"$rtid" serve status --socket "$T/rtid.sock" | sed 's/^/   /'
step "rtid serve status --prometheus (the requests)"
"$rtid" serve status --socket "$T/rtid.sock" --prometheus | grep '^rtid_up\|^rtid_requests_total' |
	sed 's/^/   /'
step "done: stopping what the demo started and removing $T"
if [ -n "$crit" ]; then
	if [ "${RTID_REQUIRE_CRIU:-0}" = 1 ] && [ -x "$criu_dir/criu" ]; then
		fail "CRIU is in $criu_dir but its part could not run (RTID_REQUIRE_CRIU=1): $crit"
	fi
	# As a test: a demo without its CRIU part is a skip, not a pass.
	[ "${RTID_DEMO_TEST:-0}" = 1 ] && { echo "demo: skipped the CRIU part: $crit"; exit 77; }
fi
exit 0
