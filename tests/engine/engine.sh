#!/bin/sh
# rtid under a container engine, end to end: a busybox container holding a
# stand-in GPU process is checkpointed and restored by runc (directly, or by
# Podman or containerd through runc) with the real CRIU and its CUDA plugin. The engine runs
# with no environment but PATH, as engines run CRIU, so the shim (first on
# that PATH, an unpacked install with its settings in PREFIX/etc/rtid/
# shim.conf) finds rtid serve by its file alone; the daemon answers from the
# mock libcuda, which takes the thread named like the driver's restore thread
# as the restore thread (RTID_MOCK_BY_NAME). Asserted: every call about the
# process was answered by the daemon (the real tool saw only -h), the tid
# CRIU used at dump and at restore is that thread's, the restore paid no
# driver attach, the driver saw each action once, the restored container runs on, and nothing is
# left (containers, processes, mounts, files).
#
#   engine.sh runc|podman|containerd|runc-plugin
#
# runc-plugin: runc with rtid's own CUDA plugin (src/plugin) in CRIU's
# libdir, named by CRIU's settings file as an operator names it there
# (doc/plugin.md); the plugin finds the daemon by the shim's settings file at
# its compiled default, which in a test build is under the build tree
# (RTID_NODE_ROOT). Asserted instead of the shim's answers: no tool and no
# shim was run at all, the plugin's record is in the image, and the same
# driver-side checks.
#
# Needs root, runc (and podman or containerd), busybox (static), the rtid-static build and
# CRIU with its CUDA plugin (RTID_CRIU_DIR, else ../shared/tools/criu beside
# the source tree); without one it exits 77 with the reason, or fails when
# RTID_REQUIRE_CRIU=1 (CI).
set -eu
engine=$1
name=engine-$engine
plugin=""
if [ "$engine" = runc-plugin ]; then
	engine=runc
	plugin=yes
fi
fail() {
	echo "$name: FAIL: $*" >&2
	for f in "$T/serve.log" "$T/shim.log" "$T/real/calls" "$T/engine.out" \
		"$(engine_log dump)" "$(engine_log restore)"; do
		[ -f "$f" ] && { echo "--- $f" >&2; tail -n 40 "$f" >&2; }
	done
	exit 1
}
skip() {
	if [ "${RTID_REQUIRE_CRIU:-0}" = 1 ]; then
		echo "$name: cannot run here (RTID_REQUIRE_CRIU=1): $*" >&2
		exit 1
	fi
	echo "$name: skipped: $*"
	exit 77
}

# A sanitized plugin needs its runtime loaded first, which CRIU, built plain,
# does not do (as the CRIU suite's plugin tests): the plain build runs this.
if [ -n "$plugin" ] && [ -n "${RTID_UNDER_SANITIZER:-}" ]; then
	echo "$name: skipped: a sanitized plugin cannot load into a plain CRIU"
	exit 77
fi
criu_dir=${RTID_CRIU_DIR:-${RTID_SOURCE_ROOT:-.}/../shared/tools/criu}
[ "$(id -u)" = 0 ] || skip "needs root (the engine runs CRIU as root)"
[ -x "$criu_dir/criu" ] && [ -f "$criu_dir/cuda_plugin.so" ] ||
	skip "no CRIU with its CUDA plugin in $criu_dir (set RTID_CRIU_DIR)"
command -v runc > /dev/null || skip "runc is not installed (apt-get install runc)"
[ "$engine" = runc ] || command -v podman > /dev/null ||
	skip "podman is not installed (apt-get install podman)"
busybox=$(command -v busybox || true)
[ -n "$busybox" ] && ! ldd "$busybox" > /dev/null 2>&1 ||
	skip "no static busybox (apt-get install busybox-static)"
[ -x "${RTID_STATIC:-}" ] || skip "no self-contained rtid (rtid-static needs jansson's static library)"
[ -x "${ENGINE_TASK:-}" ] || skip "no static stand-in process (needs libc's static library)"
if [ -n "$plugin" ]; then
	[ -n "${RTID_PLUGIN:-}" ] && [ -f "$RTID_PLUGIN" ] || skip "rtid's CUDA plugin is not built"
	# Its settings file is the node's own unless this build keeps its
	# defaults in the build tree: never touched then.
	[ -n "${RTID_NODE_ROOT:-}" ] || skip "this build's defaults are the node's (-Ddefaults=node)"
	node_conf=$RTID_NODE_ROOT/etc/rtid/shim.conf
	# The file this test writes there starts with this line and its pid: one
	# whose writer is gone was left by a killed run, and is removed (else
	# every later run would skip); any other file is not this test's
	# (node-conf.sh: the rule, which the hermetic test applies too).
	marker=$(sh "$(dirname "$0")/node-conf.sh" --marker)
	said=$(sh "$(dirname "$0")/node-conf.sh" "$node_conf" $$) || skip "$said"
	[ -z "$said" ] || echo "$name: $said"
fi

# A mount namespace of our own: /proc/driver holds a GPU for the plugin, and
# every mount the engine makes goes away with the namespace.
if [ -z "${RTID_ENGINE_NS:-}" ]; then
	unshare -m --propagation private true 2> /dev/null ||
		skip "cannot make a mount namespace (needs CAP_SYS_ADMIN)"
	RTID_ENGINE_NS=1 exec unshare -m --propagation private "$0" "$@"
fi
mount -t tmpfs -o size=1m rtid-engine /proc/driver ||
	skip "cannot mount a tmpfs on /proc/driver (needs CAP_SYS_ADMIN)"
mkdir -p /proc/driver/nvidia/gpus/0000:01:00.0

T=$(mktemp -d /tmp/rtid-engine-XXXXXX)
cid=rtid-engine-$$
daemon=""
# Podman keeps its monitors' cgroup (libpod_parent/conmon) once made: when
# this run made it, this run removes it.
podman_parent=""
[ -d /sys/fs/cgroup/pids/libpod_parent ] || podman_parent=yes
cleanup() {
	rc=$?
	set +e
	engine_remove > /dev/null 2>&1
	command -v engine_stop > /dev/null && engine_stop > /dev/null 2>&1 # an engine's own daemon
	if [ -n "$podman_parent" ]; then
		for d in /sys/fs/cgroup/*/libpod_parent; do
			rmdir "$d/conmon" "$d" 2> /dev/null
		done
	fi
	[ -n "$daemon" ] && kill "$daemon" 2>/dev/null && wait "$daemon"
	# The settings file only when it is this run's (never one it found).
	[ -n "$plugin" ] && [ "$(head -n 1 "$node_conf" 2> /dev/null)" = "$marker $$" ] &&
		rm -f "$node_conf"
	rm -rf "$T" # a failure has printed the logs that tell why (fail)
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# The node: the shim as an unpacked install, the real tool's stand-in (it
# records its calls beside itself and knows only -h), CRIU and its plugin,
# CRIU's settings as the engine names them (the org.criu.config annotation).
mkdir -p "$T/node/bin" "$T/node/etc/rtid" "$T/real" "$T/criu" "$T/plugins" "$T/state" \
	"$T/rootfs/bin" "$T/rootfs/proc" "$T/rootfs/dev" "$T/rootfs/sys" "$T/rootfs/tmp"
cp "$RTID_STATIC" "$T/node/bin/rtid"
ln -s rtid "$T/node/bin/cuda-checkpoint"
cat > "$T/node/etc/rtid/shim.conf" <<EOF
RTID_SOCKET=$T/rtid.sock
RTID_REAL_TOOL=$T/real/cuda-checkpoint
RTID_SHIM_LOG=$T/shim.log
EOF
chmod 644 "$T/node/etc/rtid/shim.conf"
cat > "$T/real/cuda-checkpoint" <<'EOF'
#!/bin/sh
printf '%s\n' "$*" >> "$(dirname "$0")/calls"
case "${1:-}" in
-h|--help) echo "Usage: cuda-checkpoint [--action lock|checkpoint|restore|unlock] --pid PID"; exit 0 ;;
esac
echo "the real tool's stand-in was called"
exit 1
EOF
chmod 755 "$T/real/cuda-checkpoint"
ln -s "$(readlink -f "$criu_dir/criu")" "$T/criu/criu"
if [ -n "$plugin" ]; then
	ln -s "$(readlink -f "$RTID_PLUGIN")" "$T/plugins/cuda_plugin.so"
	mkdir -p "$(dirname "$node_conf")"
	# noclobber: a file that appeared since the check above is left alone.
	(set -C; { echo "$marker $$"; cat "$T/node/etc/rtid/shim.conf"; } > "$node_conf") ||
		skip "$node_conf appeared during the run: not this test's"
else
	ln -s "$(readlink -f "$criu_dir/cuda_plugin.so")" "$T/plugins/cuda_plugin.so"
fi
printf 'libdir %s\n' "$T/plugins" > "$T/criu.conf"
path=$T/node/bin:$T/criu:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
cp "$busybox" "$T/rootfs/bin/busybox"
ln -s busybox "$T/rootfs/bin/sh"
cp "$ENGINE_TASK" "$T/rootfs/bin/task"

# rtid serve with the mock driver, ready before the engine runs.
printf 'title engine\nproves engine\ndriver 580.95.05\nbackend api\ntask 1 1 init\nanswer 1 none\nexpect driver 1 tid=none\n' \
	> "$T/c.case"
mkfifo "$T/serve-ready"
env RTID_MOCK_BY_NAME=1 RTID_CASE="$T/c.case" RTID_MOCK_STATE="$T/state" \
	RTID_MOCK_LOG="$T/driver.log" "$RTID_BIN" serve --socket "$T/rtid.sock" --actions \
	--libcuda "$MOCK_LIBCUDA" --ready-fd 3 3> "$T/serve-ready" 2> "$T/serve.log" &
daemon=$!
[ "$(cat "$T/serve-ready")" = ready ] || fail "rtid serve did not start"

. "$(dirname "$0")/engine-$engine.sh"

# The host's view of the process: its pid, and the tid of the thread the
# stand-in named like the driver's restore thread.
restore_tid() { # PID
	for t in /proc/"$1"/task/*; do
		[ "$(cat "$t/comm")" = cuda00001400006 ] && { basename "$t"; return 0; }
	done
	return 1
}
# Every thread keeps waking up (each ticks every 20 ms): none was left stopped.
runs() { # PID
	for t in /proc/"$1"/task/*; do
		before=$(sed -n 's/^voluntary_ctxt_switches:[[:space:]]*//p' "$t/status")
		i=0
		while [ "$(sed -n 's/^voluntary_ctxt_switches:[[:space:]]*//p' "$t/status")" = "$before" ]; do
			i=$((i + 1))
			[ "$i" -lt 100 ] || return 1
			sleep 0.05 # an observation window, not a wait for an event
		done
	done
}

# The container's process is the stand-in, started by busybox's sh with fd 3
# on a FIFO in its root: the line it writes there once its threads run is the
# readiness (a runtime's monitor may hold an inherited fd open, so not EOF).
mkfifo "$T/rootfs/ready"
{ engine_start > "$T/engine.out" 2>&1 ||
	{ timeout 5 sh -c 'echo failed > "$1"' sh "$T/rootfs/ready"; exit 1; }; } &
line=$(timeout 60 head -n 1 "$T/rootfs/ready") || true
wait $! || fail "the container did not start"
[ -n "$line" ] || fail "the stand-in never said it runs"
pid=$(engine_pid) || fail "no pid for the container"
tid=$(restore_tid "$pid") || fail "no restore thread in pid $pid"
engine_checkpoint >> "$T/engine.out" 2>&1 || fail "checkpoint failed"
grep -q "Checkpointing CUDA devices on pid $pid restore_tid $tid" "$(engine_log dump)" ||
	fail "CRIU did not checkpoint pid $pid with its restore thread $tid"
attaches=$(grep -c '"event":"cuInit"' "$T/driver.log" || true)
[ "$attaches" -ge 1 ] || fail "the driver was never attached for the dump"
if [ -n "$plugin" ]; then
	grep -q "rtid_cuda_plugin: initialized" "$(engine_log dump)" ||
		fail "CRIU did not load rtid's plugin for the dump"
	[ -f "$T/img/rtid-cuda.txt" ] || fail "the plugin's record is not in the image"
fi
engine_restore >> "$T/engine.out" 2>&1 || fail "restore failed"
pid2=$(engine_pid) || fail "no pid for the restored container"
tid2=$(restore_tid "$pid2") || fail "no restore thread in the restored pid $pid2"
if [ -n "$plugin" ]; then
	grep -q "rtid_cuda_plugin: resuming devices on pid $pid2" "$(engine_log restore)" ||
		fail "rtid's plugin did not resume pid $pid2"
else
	grep -q "Restore thread pid $tid2 found for real pid $pid2" "$(engine_log restore)" ||
		fail "CRIU did not restore pid $pid2 with its restore thread $tid2"
fi
runs "$pid2" || fail "the restored container does not run on (a thread stays stopped)"
engine_alive || fail "the engine does not see the restored container running"

if [ -n "$plugin" ]; then
	# No spawn at all: neither the tool nor the shim ran.
	[ ! -e "$T/real/calls" ] || fail "the real tool was run: $(cat "$T/real/calls")"
	[ ! -s "$T/shim.log" ] || fail "the shim was run"
else
	# Every call about the process went to the daemon: the real tool saw -h only.
	if grep -v '^-h$' "$T/real/calls" 2>/dev/null; then
		fail "the real tool was run for the calls above"
	fi
	for op in "get-restore-tid --pid $pid:" "lock --pid $pid:" "checkpoint --pid $pid:" \
		"get-restore-tid --pid $pid2:" "restore --pid $pid2:" "unlock --pid $pid2:"; do
		grep -F "$op answered by rtid serve" "$T/shim.log" > /dev/null ||
			fail "the shim's log has no \"$op answered by rtid serve\""
	done
fi
# The restore paid no attach (the daemon's workers stayed attached since the
# dump); each action reached the driver once, for the right process.
[ "$(grep -c '"event":"cuInit"' "$T/driver.log")" = "$attaches" ] ||
	fail "the driver was attached again for the restore"
for ev in lock:$pid checkpoint:$pid restore:$pid2 unlock:$pid2; do
	n=$(grep -c "\"event\":\"${ev%%:*}\",\"pid\":${ev#*:}," "$T/driver.log" || true)
	[ "$n" = 1 ] || fail "the driver saw ${ev%%:*} for pid ${ev#*:} $n times, not once"
done

# Nothing left: the container, its processes, its cgroups, its mounts.
cgroups=$(engine_cgroups)
[ -n "$cgroups" ] || fail "the container's cgroups were not found"
engine_remove >> "$T/engine.out" 2>&1 || fail "the container could not be removed"
for d in $cgroups; do
	[ -d "$d" ] && fail "the container's cgroup $d is left"
done
engine_gone || fail "the engine still lists the container"
# Killed by the engine; reaped by whoever it was handed to (init after a
# detached restore), so a zombie is not left by us.
grep -qs '^State:[[:space:]]*[RSDT]' "/proc/$pid2/status" && fail "the container's process $pid2 is left"
grep -q "$T" /proc/self/mountinfo && fail "mounts under $T are left"
kill "$daemon" && wait "$daemon" || fail "rtid serve did not stop cleanly"
daemon=""
pgrep -f "$T" > /dev/null && fail "processes of the run are left: $(pgrep -a -f "$T")"
echo "$name: checkpointed pid $pid (restore tid $tid) and restored it as $pid2 (restore tid $tid2); every call answered by rtid serve${plugin:+, asked by rtid's plugin}"
