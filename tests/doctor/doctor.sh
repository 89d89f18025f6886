#!/bin/sh
# rtid doctor on a node tree built here (--root): all well passes (exit 0),
# and each thing a user gets wrong is named with its fix (exit 1): no shim
# first on the engines' PATH, the real tool before it, one whose -h fails
# (CRIU's plugin then turns itself off), another rtid between the shim and
# the real tool, a daemon that serves queries only or is not there (fixes for
# systemd and by hand), the shipped unit's daemon passing, CRIU's libdir without the CUDA plugin, a bad line or
# a bad value in the shim's settings file.
set -eu
rtid=$RTID_BIN
tmp=$(mktemp -d)
daemon=""
hangup=""
trap 'for p in $daemon $hangup; do kill $p 2>/dev/null; done; wait 2>/dev/null; rm -rf "$tmp"' EXIT
fail() { echo "doctor test: $*" >&2; exit 1; }

r=$tmp/root
mkdir -p "$r/usr/local/sbin" "$r/usr/local/bin" "$r/usr/bin" "$r/usr/sbin" "$r/usr/lib/criu" "$r/etc/criu" \
	"$r/proc/driver/nvidia/gpus/0000:01:00.0"
ln -s "$rtid" "$r/usr/local/sbin/cuda-checkpoint"
# The real tool's -h: exit 0 and --action in it, as CRIU's plugin wants.
tool='#!/bin/sh\necho "Usage: cuda-checkpoint --action lock|checkpoint|restore|unlock --pid PID"\n'
printf "$tool" > "$r/usr/bin/cuda-checkpoint"
printf '#!/bin/sh\necho Version: 4.2\n' > "$r/usr/sbin/criu"
chmod 755 "$r/usr/bin/cuda-checkpoint" "$r/usr/sbin/criu"
: > "$r/usr/lib/criu/cuda_plugin.so"
printf 'NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.03  Thu Jan  1 2026\n' \
	> "$r/proc/driver/nvidia/version"
# Each GPU's information as the driver writes it; the doctor lists the
# UUIDs, for a device map.
printf 'Model: \t\t NVIDIA H100 80GB HBM3\nIRQ:   \t\t 93\nGPU UUID: \t GPU-0a1b2c3d-0000-4000-8000-00000000000a\nBus Location: \t 0000:01:00.0\n' \
	> "$r/proc/driver/nvidia/gpus/0000:01:00.0/information"
# The tree's own settings file (paths in it are the tree's): --root judges
# the tree alone, whatever this shell's RTID_* say.
conf=$r/etc/rtid/shim.conf
mkdir -p "$r/etc/rtid"
uid_line=""
setconf() { # printf's format and arguments; the uid the shim trusts, where named, after it
	# shellcheck disable=SC2059 # the format is the caller's
	printf "$@" > "$conf"
	[ -z "$uid_line" ] || echo "$uid_line" >> "$conf"
}
setconf 'RTID_SOCKET=/s\n'
# A shell's settings that must not count: another file, socket and tool.
printf 'RTID_SOCKET=%s/elsewhere\nRTID_REAL_TOOL=/bin/false\n' "$tmp" > "$tmp/host.conf"
export RTID_SHIM_CONF=$tmp/host.conf RTID_SOCKET=$tmp/elsewhere RTID_REAL_TOOL=/bin/false
printf 'title d\nproves d\ndriver 580.159.03\nbackend api\ntask 1 1 init\nanswer 1 none\nexpect driver 1 tid=none\n' > "$tmp/c.case"
export RTID_CASE=$tmp/c.case

serve() { # extra options: rtid serve on $r/s, ready when this returns
	mkfifo "$tmp/ready"
	"$rtid" serve --socket "$r/s" --libcuda "$MOCK_LIBCUDA" --ready-fd 3 "$@" \
		3> "$tmp/ready" 2> "$tmp/serve.log" &
	daemon=$!
	read -r _ < "$tmp/ready"
	rm "$tmp/ready"
}
stop() { kill "$daemon"; wait "$daemon" || true; daemon=""; }
# The doctor's verdict on the tree: the exit status, and the JSON checked by
# a python expression over c (checks by name) and ok.
doctor() { # want_exit python_expression
	set +e
	"$rtid" doctor --root "$r" --json > "$tmp/out.json" 2> "$tmp/err"
	rc=$?
	set -e
	[ "$rc" = "$1" ] || fail "exit $rc, not $1: $(cat "$tmp/out.json" "$tmp/err")"
	python3 -c "
import json, sys
o = json.load(open('$tmp/out.json'))
c = {x['name']: x for x in o['checks']}
ok = o['ok']
assert $2, json.dumps(o, indent=1)
" || fail "$2"
}

# As a user, the daemon is this user's, which the shim (root, as CRIU runs
# it) trusts only when RTID_SERVE_UID names it: said so, with that fix; the
# rest of the test names it. The checks that need another uid (a file or a
# socket of nobody's, doctor run as nobody) need root, and say so.
as_root=""
[ "$(id -u)" = 0 ] && as_root=1
root_only() { echo "doctor test: skipped as a user (needs root): $*"; }
serve --actions
if [ -z "$as_root" ]; then
	doctor 1 "not c['rtid-serve']['ok'] and 'owned by uid $(id -u)' in c['rtid-serve']['detail'] and 'RTID_SERVE_UID' in c['rtid-serve']['fix']"
	uid_line="RTID_SERVE_UID=$(id -u)"
	setconf 'RTID_SOCKET=/s\n'
fi
doctor 0 "ok and all(x['ok'] for x in o['checks']) and len(c) == 12 and c['criu-version']['detail'] == 'CRIU 4.2'"
doctor 0 "c['nvidia-gpus']['detail'] == '1 GPU in $r/proc/driver/nvidia/gpus: 0000:01:00.0 GPU-0a1b2c3d-0000-4000-8000-00000000000a'"
mkdir "$r/proc/driver/nvidia/gpus/0000:41:00.0"
printf 'Model: \t\t NVIDIA H100 80GB HBM3\n' > "$r/proc/driver/nvidia/gpus/0000:41:00.0/information"
doctor 0 "c['nvidia-gpus']['detail'].endswith('gpus: 0000:01:00.0 GPU-0a1b2c3d-0000-4000-8000-00000000000a, 0000:41:00.0 no UUID')"
rm -r "$r/proc/driver/nvidia/gpus/0000:41:00.0"
# One line says what was checked: the tree's file, socket and PATH, and no
# setting of this shell's (before, doctor judged the host's file and socket,
# and the shim it ran for -h read the host's settings).
doctor 0 "c['root']['detail'] == 'the tree at $r alone (no setting of this shell\\'s): settings $r/etc/rtid/shim.conf, socket $r/s, the engines\\' PATH $r/usr/local/sbin:$r/usr/local/bin:$r/usr/sbin:$r/usr/bin:$r/sbin:$r/bin' and c['tool-help']['ok'] and c['real-tool']['ok']"
"$rtid" doctor --root "$r" | grep -q "^all well$" || fail "the words do not say all is well"
# The daemon is asked with its status request: no driver call of doctor's in
# its counters (it used to ask get-state of pid 1, counted as a request).
"$rtid" serve status --socket "$r/s" > "$tmp/status"
grep -q '^requests ' "$tmp/status" && fail "doctor's check reached the driver: $(cat "$tmp/status")"

# The daemon serves queries only: named, with the fix.
stop
serve
doctor 1 "not c['rtid-serve']['ok'] and 'queries only' in c['rtid-serve']['detail'] and '--actions' in c['rtid-serve']['fix']"
stop
# The shipped unit and doctor agree: the daemon as rtid.service's ExecStart
# runs it (its options, the socket and the mock driver ours) passes.
unit_args=$(sed -n 's/^ExecStart=[^ ]*rtid serve//p' "$RTID_SOURCE_ROOT/systemd/rtid.service.in")
grep -q '^ExecStart=[^ ]*rtid serve' "$RTID_SOURCE_ROOT/systemd/rtid.service.in" ||
	fail "no ExecStart=.../rtid serve in the unit"
# shellcheck disable=SC2086 # the unit's options, split as systemd splits them
serve $unit_args
doctor 0 "c['rtid-serve']['ok'] and 'queries and actions' in c['rtid-serve']['detail']"
stop
# No daemon at all: started by hand where systemd does not run the node, by
# systemctl where it does and rtid's units are installed.
doctor 1 "not c['rtid-serve']['ok'] and 'no socket' in c['rtid-serve']['detail'] and 'rtid serve --actions' in c['rtid-serve']['fix'] and 'systemctl' not in c['rtid-serve']['fix']"
mkdir -p "$r/run/systemd/system" "$r/usr/lib/systemd/system"
doctor 1 "'systemctl' not in c['rtid-serve']['fix']"
: > "$r/usr/lib/systemd/system/rtid.socket"
doctor 1 "c['rtid-serve']['fix'] == 'systemctl enable --now rtid.socket (doc/serve.md)'"
rm -r "$r/run/systemd"
serve --actions

# The real tool before the shim: CRIU would run it.
mv "$r/usr/local/sbin/cuda-checkpoint" "$r/usr/sbin/cuda-checkpoint"
cp "$r/usr/bin/cuda-checkpoint" "$r/usr/local/sbin/cuda-checkpoint"
doctor 1 "not c['shim-on-path']['ok'] and 'not rtid' in c['shim-on-path']['detail']"
rm "$r/usr/local/sbin/cuda-checkpoint" "$r/usr/sbin/cuda-checkpoint" "$r/usr/bin/cuda-checkpoint"
# No cuda-checkpoint at all; then the shim with no real tool after it.
doctor 1 "not c['shim-on-path']['ok'] and c['shim-on-path']['fix'].startswith('ln -s') and not c['real-tool']['ok']"
ln -s "$rtid" "$r/usr/local/sbin/cuda-checkpoint"
doctor 1 "c['shim-on-path']['ok'] and not c['real-tool']['ok']"
printf "$tool" > "$r/usr/bin/cuda-checkpoint"
chmod 755 "$r/usr/bin/cuda-checkpoint"
doctor 0 "c['real-tool']['ok'] and c['tool-help']['ok']"
# A node where no process can be started (fork fails, through libfiu where
# it is installed): -h cannot be run, and both checks say so, not "exit 127".
# Not under sanitizers: libfiu's preload would come before their runtime.
if [ -z "${RTID_UNDER_SANITIZER:-}" ] && command -v fiu-run > /dev/null &&
	[ -e /usr/lib/fiu/fiu_posix_preload.so ]; then
	set +e
	fiu-run -x -c 'enable name=posix/proc/fork,failinfo=11' \
		"$rtid" doctor --root "$r" --json > "$tmp/out.json" 2> "$tmp/err"
	rc=$?
	set -e
	[ "$rc" = 1 ] || fail "doctor with fork failing: exit $rc, not 1: $(cat "$tmp/out.json" "$tmp/err")"
	python3 -c "
import json
c = {x['name']: x for x in json.load(open('$tmp/out.json'))['checks']}
for n in ('tool-help', 'real-tool'):
    assert not c[n]['ok'] and 'cannot run it here: Resource temporarily unavailable' in c[n]['detail'], c[n]
" || fail "doctor with fork failing did not say that -h cannot be run"
else
	echo "no libfiu (fiu-run), or under sanitizers: the check of a node that cannot fork is skipped"
fi

# The real tool's -h as CRIU's plugin reads it: /bin/false; NVIDIA's stub
# without the driver's library; a help without --action. Each fails, with
# the exit status and the first line of stderr, run behind the shim and as
# the first on the PATH alike.
mv "$r/usr/bin/cuda-checkpoint" "$tmp/tool"
ln -s /bin/false "$r/usr/bin/cuda-checkpoint"
doctor 1 "not c['real-tool']['ok'] and 'exit 1: nothing on stderr' in c['real-tool']['detail'] and not c['tool-help']['ok'] and 'plugin turns itself off' in c['real-tool']['fix']"
rm "$r/usr/bin/cuda-checkpoint"
printf '#!/bin/sh\necho "cuda-checkpoint: error while loading shared libraries: libcuda.so.1: cannot open shared object file: No such file or directory" >&2\necho more >&2\nexit 127\n' > "$r/usr/bin/cuda-checkpoint"
chmod 755 "$r/usr/bin/cuda-checkpoint"
doctor 1 "not c['real-tool']['ok'] and c['real-tool']['detail'].endswith('-h, run as the shim runs it: exit 127: cuda-checkpoint: error while loading shared libraries: libcuda.so.1: cannot open shared object file: No such file or directory') and 'libcuda.so.1' in c['real-tool']['fix'] and 'exit 127' in c['tool-help']['detail']"
printf '#!/bin/sh\necho "Usage: cuda-checkpoint --toggle --pid PID"\n' > "$r/usr/bin/cuda-checkpoint"
doctor 1 "not c['real-tool']['ok'] and 'no --action in the first 2047 bytes' in c['real-tool']['detail']"
# --action past the plugin's 2047 bytes is not seen; a tool that sees the
# caller's LD_LIBRARY_PATH only is not run with it; one killed by a signal.
printf '#!/bin/sh\n/usr/bin/head -c 2100 /dev/zero | /usr/bin/tr "\\\\0" x\necho --action\n' > "$r/usr/bin/cuda-checkpoint"
doctor 1 "'no --action in the first 2047 bytes' in c['real-tool']['detail']"
printf '#!/bin/sh\nprintf "help\\\\0 --action\\\\n"\n' > "$r/usr/bin/cuda-checkpoint" # the plugin's strstr stops at a NUL
doctor 1 "'no --action in the first 2047 bytes' in c['real-tool']['detail']"
printf '#!/bin/sh\n[ -n "$LD_LIBRARY_PATH" ] && echo --action && exit 0\necho "no libcuda" >&2; exit 127\n' > "$r/usr/bin/cuda-checkpoint"
LD_LIBRARY_PATH=/opt/nvidia doctor 1 "'exit 127: no libcuda' in c['real-tool']['detail']"
printf '#!/bin/sh\nkill -9 $$\n' > "$r/usr/bin/cuda-checkpoint"
doctor 1 "'killed by signal 9' in c['real-tool']['detail']"
# A -h that never answers (the plugin would wait on it): each check gives up
# at its deadline and says so, and the tool's group is killed, nothing left.
printf '#!/bin/sh\necho $$ >> %s/hang.pids\nexec /bin/sleep 600\n' "$tmp" > "$r/usr/bin/cuda-checkpoint"
doctor 1 "not c['real-tool']['ok'] and 'no answer in 10 s' in c['real-tool']['detail'] and 'no answer in 10 s' in c['tool-help']['detail']"
[ "$(wc -l < "$tmp/hang.pids")" = 2 ] || fail "the hanging -h did not run twice"
while read -r p; do
	! kill -0 "$p" 2> /dev/null || fail "the hanging tool ($p) was left running"
done < "$tmp/hang.pids"
mv "$tmp/tool" "$r/usr/bin/cuda-checkpoint"

# Another rtid between the shim and the real tool (another build: other
# bytes, the same note) is passed over, and named; named as the real tool,
# it fails. Before, doctor took it for the real tool.
cp "$rtid" "$r/usr/sbin/cuda-checkpoint"
printf 'another build' >> "$r/usr/sbin/cuda-checkpoint"
doctor 0 "c['real-tool']['ok'] and c['real-tool']['detail'].startswith('$r/usr/bin/cuda-checkpoint:') and 'passed over: $r/usr/sbin/cuda-checkpoint (rtid ' in c['real-tool']['detail']"
setconf 'RTID_SOCKET=/s\nRTID_REAL_TOOL=/usr/sbin/cuda-checkpoint\n'
doctor 1 "not c['real-tool']['ok'] and 'another rtid' in c['real-tool']['detail']"
setconf 'RTID_SOCKET=/s\n'
# First on the PATH, another build is a shim still.
mv "$r/usr/local/sbin/cuda-checkpoint" "$tmp/link"
doctor 0 "'is rtid (another build, version ' in c['shim-on-path']['detail']"
mv "$tmp/link" "$r/usr/local/sbin/cuda-checkpoint"
cp "$rtid" "$r/usr/local/bin/cuda-checkpoint"
doctor 0 "'and 1 more' in c['real-tool']['detail']"
rm "$r/usr/sbin/cuda-checkpoint" "$r/usr/local/bin/cuda-checkpoint"

# No plugin anywhere; then runc.conf names a libdir without the plugin.
mv "$r/usr/lib/criu/cuda_plugin.so" "$tmp/plugin.so"
doctor 1 "not c['criu-cuda-plugin']['ok'] and 'no cuda_plugin.so' in c['criu-cuda-plugin']['detail'] and \"name rtid's plugin directory (LIBDIR/rtid/criu\" in c['criu-cuda-plugin']['fix']"
mv "$tmp/plugin.so" "$r/usr/lib/criu/cuda_plugin.so"
mkdir -p "$r/opt/criu"
# A runc.conf that names no libdir: CRIU's own directory, which has the plugin.
printf 'tcp-established\n# libdir /opt/criu\n' > "$r/etc/criu/runc.conf"
doctor 0 "c['criu-cuda-plugin']['ok'] and 'runc.conf' not in c['criu-cuda-plugin']['detail']"
printf 'tcp-established\n\t lib-dir /opt/criu' > "$r/etc/criu/runc.conf" # the other spelling, no newline
doctor 1 "'runc.conf names libdir /opt/criu' in c['criu-cuda-plugin']['detail']"
printf 'tcp-established\n  libdir /opt/criu\n' > "$r/etc/criu/runc.conf"
doctor 1 "not c['criu-cuda-plugin']['ok'] and 'runc.conf names libdir /opt/criu' in c['criu-cuda-plugin']['detail']"
: > "$r/opt/criu/cuda_plugin.so"
doctor 0 "c['criu-cuda-plugin']['ok']"
# Which CUDA plugin CRIU will load: rtid's carries its log prefix.
printf 'ELF...rtid_cuda_plugin: %%s\0...' > "$r/opt/criu/cuda_plugin.so"
doctor 0 "c['criu-cuda-plugin']['ok'] and \"(rtid's CUDA plugin)\" in c['criu-cuda-plugin']['detail']"
printf 'ELF...cuda_plugin: \0...' > "$r/opt/criu/cuda_plugin.so"
doctor 0 "\"(CRIU's own CUDA plugin)\" in c['criu-cuda-plugin']['detail']"
# Two CUDA plugins in one directory (rtid's under another name beside
# CRIU's): which one serves a dump would depend on file names. Another kind
# of plugin beside it is no fault.
printf 'ELF...amdgpu_plugin\0...' > "$r/opt/criu/amdgpu_plugin.so"
doctor 0 "c['criu-cuda-plugin']['ok']"
printf 'ELF...cuda_plugin\0...rtid_cuda_plugin: %%s\0' > "$r/opt/criu/rtid_cuda.so"
doctor 1 "not c['criu-cuda-plugin']['ok'] and '/opt/criu holds 2 CUDA plugins' in c['criu-cuda-plugin']['detail'] and \"rtid_cuda.so (rtid's CUDA plugin)\" in c['criu-cuda-plugin']['detail'] and 'directory order' in c['criu-cuda-plugin']['detail'] and 'keep one CUDA plugin' in c['criu-cuda-plugin']['fix']"
rm "$r/opt/criu/rtid_cuda.so" "$r/opt/criu/amdgpu_plugin.so"

# A bad line in the shim's settings, and a file others may write.
setconf 'RTID_SOCKET=/s\nRTID_BOGUS=1\n'
doctor 1 "not c['shim-settings']['ok'] and c['shim-settings']['detail'].endswith(\": not a setting (skipped): line 2 'RTID_BOGUS'\")"
# A value the shim cannot use: named with its line and the values accepted
# (the shim hands every call to the real tool then). Before, doctor passed it.
setconf 'RTID_SOCKET=/s\nRTID_MODE=scna\n'
doctor 1 "not c['shim-settings']['ok'] and 'line 2: RTID_MODE=scna' in c['shim-settings']['detail'] and 'driver, scan, crosscheck or canary' in c['shim-settings']['detail']"
setconf 'RTID_SOCKET=/s\n# the daemon\nRTID_SERVICE_TIMEOUT=2s\nRTID_BACKEND=gpu\n'
doctor 1 "'line 3: RTID_SERVICE_TIMEOUT=2s' in c['shim-settings']['detail'] and 'without a unit' in c['shim-settings']['detail'] and 'and more' in c['shim-settings']['detail']"
setconf 'RTID_SOCKET=/s\nRTID_SERVICE_TIMEOUT=2\nRTID_MODE=\nRTID_PATTERN=^cuda\nRTID_SERVE_UID=0\n'
doctor 0 "c['shim-settings']['ok']"
setconf 'RTID_SOCKET=/s\n'
chmod 0666 "$conf"
doctor 1 "not c['shim-settings']['ok'] and 'writable by group or others' in c['shim-settings']['detail']"
chmod 0644 "$conf"

# The settings: none at all, none there, a directory, too large, a line
# with blanks around it; RTID_REAL_TOOL from the file, missing or rtid itself.
# No file: the shim's defaults (an empty RTID_SHIM_CONF says so for the
# host, which only a doctor without --root reads; its other checks are the
# host's and not judged here).
RTID_SHIM_CONF= RTID_SOCKET=$r/s RTID_SHIM_LOG=$tmp/nowhere/shim.log "$rtid" doctor --json > "$tmp/o.json" || true
grep -q '"detail": "none (RTID_SHIM_CONF is empty)"' "$tmp/o.json" || fail "an empty RTID_SHIM_CONF is not none"
# Without --root the environment's log is the one judged.
grep -q "RTID_SHIM_LOG=$tmp/nowhere/shim.log: cannot be written: its directory does not exist" "$tmp/o.json" ||
	fail "the environment's RTID_SHIM_LOG is not judged: $(cat "$tmp/o.json")"
mv "$conf" "$tmp/conf.kept"
doctor 1 "c['shim-settings']['ok'] and c['shim-settings']['detail'].startswith('$r/etc/rtid/shim.conf: none') and 'socket $r/run/rtid/rtid.sock' in c['root']['detail']"
mkdir "$conf"
doctor 1 "not c['shim-settings']['ok'] and 'not a regular file' in c['shim-settings']['detail']"
rmdir "$conf"
head -c 20000 /dev/zero | tr '\0' '#' > "$conf"
doctor 1 "not c['shim-settings']['ok'] and 'larger than 16 KiB' in c['shim-settings']['detail']"
mv "$tmp/conf.kept" "$conf"
setconf '  RTID_SOCKET=/s \t\r\n\n\t# c\nRTID_REAL_TOOL=%s/nothing\n' "$tmp"
doctor 1 "c['shim-settings']['ok'] and not c['real-tool']['ok'] and 'not an executable' in c['real-tool']['detail']"
# The old name of the setting, where the file has no new one; the new one
# wins where it has both, in either order.
setconf 'RTID_SOCKET=/s\nRTID_CUDA_CHECKPOINT=%s/old-name\n' "$tmp"
doctor 1 "not c['real-tool']['ok'] and 'old-name' in c['real-tool']['detail']"
setconf 'RTID_SOCKET=/s\nRTID_REAL_TOOL=%s/new-name\nRTID_CUDA_CHECKPOINT=%s/old-name\n' "$tmp" "$tmp"
doctor 1 "'new-name' in c['real-tool']['detail'] and 'old-name' not in c['real-tool']['detail']"
ln -s "$rtid" "$r/usr/bin/rtid"
setconf 'RTID_SOCKET=/s\nRTID_REAL_TOOL=/usr/bin/rtid\n'
doctor 1 "not c['real-tool']['ok'] and 'rtid itself' in c['real-tool']['detail']"
setconf 'RTID_SOCKET=/s\nRTID_REAL_TOOL=/usr/bin/cuda-checkpoint\n'
doctor 0 "c['real-tool']['ok'] and c['real-tool']['detail'].startswith('RTID_REAL_TOOL=')"
setconf 'RTID_SOCKET=/s\n'
# Another user's file; many bad lines (the first 8 named); under --root the
# tree's file over this shell's environment for the socket and the real tool.
if [ "$as_root" ]; then
	chown 65534 "$conf"
	doctor 1 "not c['shim-settings']['ok'] and 'owned by another user' in c['shim-settings']['detail']"
	chown 0 "$conf"
else
	root_only "a settings file of another user's"
fi
setconf 'a\n=b\nc\nd\ne\nf\ng\nh\ni\nj\n'
doctor 1 "c['shim-settings']['detail'].endswith(\"line 1 'a', line 2 '', line 3 'c', line 4 'd', line 5 'e', line 6 'f', line 7 'g', line 8 'h', and more\")"
# RTID_SHIM_LOG where the shim cannot write (its directory missing, a link,
# a directory): every note would be lost; said. One it can write passes.
setconf 'RTID_SOCKET=/s\nRTID_SHIM_LOG=/var/log/rtid/shim.log\n'
doctor 1 "not c['shim-log']['ok'] and c['shim-log']['detail'] == 'RTID_SHIM_LOG=/var/log/rtid/shim.log: cannot be written: its directory does not exist'"
mkdir -p "$r/var/log/rtid"
doctor 0 "c['shim-log']['ok']"
: > "$r/var/log/rtid/shim.log" # there already, root's to write
doctor 0 "c['shim-log']['ok'] and c['shim-log']['detail'] == 'RTID_SHIM_LOG=/var/log/rtid/shim.log: the shim\\'s notes go there'"
rm "$r/var/log/rtid/shim.log"
ln -s /dev/null "$r/var/log/rtid/shim.log"
doctor 1 "not c['shim-log']['ok'] and 'not a regular file' in c['shim-log']['detail']"
rm "$r/var/log/rtid/shim.log"
setconf 'RTID_SOCKET=/nowhere\nRTID_REAL_TOOL=/nothing\n'
RTID_SOCKET=$r/s RTID_REAL_TOOL=$r/usr/bin/cuda-checkpoint doctor 1 "not c['rtid-serve']['ok'] and c['rtid-serve']['detail'].startswith('$r/nowhere: no socket') and 'RTID_REAL_TOOL=$r/nothing: not an executable' in c['real-tool']['detail']"
# A file others may write with a value the shim cannot use, under the root:
# judged as the tree's, not passed as "none" (as when the host's was read).
setconf 'RTID_SOCKET=/s\nRTID_MODE=bogus\n'
chmod 0666 "$conf"
doctor 1 "not c['shim-settings']['ok'] and 'writable by group or others' in c['shim-settings']['detail']"
chmod 0644 "$conf"
setconf 'RTID_SOCKET=/s\n'

# The daemon's socket: another user's, one nobody answers on, a daemon that
# cannot attach.
stop
serve --actions
if [ "$as_root" ]; then
	chown 65534 "$r/s"
	doctor 1 "not c['rtid-serve']['ok'] and 'owned by uid 65534' in c['rtid-serve']['detail']"
	chown 0 "$r/s"
	# RTID_SERVE_UID names the uid the shim trusts besides root's.
	chown 65534 "$r/s"
	setconf 'RTID_SOCKET=/s\nRTID_SERVE_UID=65534\n'
	doctor 0 "c['rtid-serve']['ok']"
	setconf 'RTID_SOCKET=/s\n'
	chown 0 "$r/s"
else
	root_only "a socket of another user's, doctor run as another user"
fi
# Another user than root may not connect (the socket is root's, 0600): said
# as that, with the fix, not as a daemon that is gone.
if [ "$as_root" ] && command -v setpriv > /dev/null; then
	chmod 0755 "$tmp"
	set +e
	setpriv --reuid 65534 --regid 65534 --clear-groups "$rtid" doctor --root "$r" --json > "$tmp/out.json"
	set -e
	chmod 0700 "$tmp"
	python3 -c "
import json
c = {x['name']: x for x in json.load(open('$tmp/out.json'))['checks']}
assert 'Permission denied' in c['rtid-serve']['detail'] and 'run rtid doctor as root' in c['rtid-serve']['fix'], c['rtid-serve']
" || fail "a socket we may not connect to is not said as such"
fi
kill -9 "$daemon"; wait "$daemon" 2>/dev/null || true; daemon=""
doctor 1 "not c['rtid-serve']['ok'] and 'cannot connect' in c['rtid-serve']['detail'] and 'the daemon is gone' in c['rtid-serve']['detail'] and 'start rtid serve again' in c['rtid-serve']['fix']"
mkdir -p "$r/run/systemd/system"
doctor 1 "c['rtid-serve']['fix'].startswith('systemctl restart rtid.socket rtid.service')"
rm -f "$r/s"
RTID_CASE=$tmp/nothing serve --actions
doctor 1 "not c['rtid-serve']['ok'] and 'not attached to the driver (1 attach started, as many failed or ended)' in c['rtid-serve']['detail'] and 'journalctl -u rtid' in c['rtid-serve']['fix']"
rm -r "$r/run/systemd"
doctor 1 "'stderr says why the driver attach fails' in c['rtid-serve']['fix']"
stop
# Something on the socket that takes the connection and hangs up at once.
rm -f "$r/s"
mkfifo "$tmp/hangup-ready"
python3 -c "
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.bind(sys.argv[1]); s.listen(8)
open(sys.argv[2], 'w').write('listening\\n')
while True:
    c, _ = s.accept(); c.close()
" "$r/s" "$tmp/hangup-ready" &
hangup=$!
read -r _ < "$tmp/hangup-ready"
doctor 1 "not c['rtid-serve']['ok'] and 'no answer to status' in c['rtid-serve']['detail']"
kill "$hangup"; wait "$hangup" 2>/dev/null || true; hangup=""
rm -f "$r/s"
serve --actions
# CRIU older than its CUDA plugin (Debian 12's 3.17), and one that says no version.
printf '#!/bin/sh\necho Version: 3.17\n' > "$r/usr/sbin/criu"
doctor 1 "not c['criu-version']['ok'] and '3.17' in c['criu-version']['detail'] and '4.0' in c['criu-version']['fix']"
printf '#!/bin/sh\nexit 1\n' > "$r/usr/sbin/criu"
doctor 1 "not c['criu-version']['ok'] and 'failed' in c['criu-version']['detail']"
printf '#!/bin/sh\necho Version: 4\n' > "$r/usr/sbin/criu"
doctor 0 "c['criu-version']['detail'] == 'CRIU 4.0'"
for bad in 'echo Version: four' 'echo GitID: v4.2' 'kill -9 $$'; do
	printf '#!/bin/sh\n%s\n' "$bad" > "$r/usr/sbin/criu"
	doctor 1 "not c['criu-version']['ok'] and 'failed or named no version' in c['criu-version']['detail']"
done
printf '#!/bin/sh\necho Version: 4.2\n' > "$r/usr/sbin/criu"

# The scan's attestation for the running driver: no matter in driver mode; in
# scan mode, missing is a fault with its fix, and ten agreements are enough.
# Mode and attestation as the tree's file names them (a path of the tree's).
att=$r/att.json
setconf 'RTID_SOCKET=/s\nRTID_MODE=scan\nRTID_ATTESTATION=/att.json\n'
doctor 1 "not c['scan-attested']['ok'] and '0 of 10' in c['scan-attested']['detail'] and 'rtid validate' in c['scan-attested']['fix']"
setconf 'RTID_SOCKET=/s\nRTID_MODE=canary\nRTID_ATTESTATION=/att.json\n'
doctor 1 "not c['scan-attested']['ok'] and 'falls back' in c['scan-attested']['detail']"
printf '{"format": 1, "drivers": {"580.159.03": {"agree": 10, "agree_none": 0, "mismatch": 0, "revoked": false}}}\n' > "$att"
doctor 0 "c['scan-attested']['ok'] and c['scan-attested']['detail'].startswith('driver 580.159.03: attested (10 of 10')"
printf '{"format": 1, "drivers": {"580.159.03": {"agree": 12, "agree_none": 0, "mismatch": 1, "revoked": false}}}\n' > "$att"
doctor 1 "not c['scan-attested']['ok'] and 'revoked' in c['scan-attested']['detail']"
printf 'not json' > "$att"
doctor 1 "not c['scan-attested']['ok'] and 'att.json' in c['scan-attested']['detail']"
# An attestation others may write is not trusted: nothing in it counts.
printf '{"format": 1, "drivers": {"580.159.03": {"agree": 10, "agree_none": 0, "mismatch": 0, "revoked": false}}}\n' > "$att"
chmod 0666 "$att"
doctor 1 "not c['scan-attested']['ok'] and 'not trusted' in c['scan-attested']['detail']"
chmod 0644 "$att"
# This shell's mode and attestation do not count under --root.
RTID_MODE=driver RTID_ATTESTATION=$tmp/none doctor 0 "c['scan-attested']['detail'].startswith('driver 580.159.03: attested')"
setconf 'RTID_SOCKET=/s\nRTID_MODE=driver\n'
doctor 0 "'driver mode does not scan' in c['scan-attested']['detail']"
# No attestation named: the default file under the root, none there.
setconf 'RTID_SOCKET=/s\nRTID_MODE=scan\n'
doctor 1 "'0 of 10' in c['scan-attested']['detail']"
setconf 'RTID_SOCKET=/s\n'
doctor 0 "c['scan-attested']['ok']"

# No CRIU on the engines' PATH, and the words say how to fix it.
mv "$r/usr/sbin/criu" "$tmp/criu"
doctor 1 "not c['criu']['ok']"
"$rtid" doctor --root "$r" > "$tmp/words" && fail "a FAIL exited 0"
grep -q '^      fix: install CRIU' "$tmp/words" || fail "the words give no fix"
mv "$tmp/criu" "$r/usr/sbin/criu"
"$rtid" doctor --root "$r" > "$tmp/words" || true
"$rtid" doctor --help | grep -q -- '--root DIR' || fail "no --root in the help"
# --root / is this machine: whatever it lacks, the answer is a verdict, not an error.
set +e
"$rtid" doctor --root / --json > "$tmp/host.json"
rc=$?
set -e
[ "$rc" -le 1 ] && python3 -c "import json; json.load(open('$tmp/host.json'))" ||
	fail "doctor --root / gave no verdict (exit $rc)"
"$rtid" doctor --bogus 2> /dev/null && fail "a bad option passed"
"$rtid" doctor extra 2> /dev/null && fail "an argument passed"

# rtid serve's options: each bad one refused with exit 2.
for bad in "--max-per-uid x" "--workers 0" "--workers 65" "--actions --workers 1"; do
	set +e
	"$rtid" serve --socket "$tmp/never" $bad 2> "$tmp/err"
	rc=$?
	set -e
	[ "$rc" = 2 ] || fail "rtid serve $bad exited $rc, not 2"
	[ -s "$tmp/err" ] || fail "rtid serve $bad said nothing"
done

# rtid serve status: the daemon's counters, and a clear failure without one.
"$rtid" serve status --socket "$r/s" | grep -q '^attaches 1$' || fail "status in words"
"$rtid" serve status --help | grep -q -- '--prometheus' || fail "status help"
"$rtid" serve status --bogus 2> /dev/null && fail "status took a bad option"
"$rtid" serve status --socket "$tmp/none" 2> "$tmp/err" && fail "status without a daemon passed"
grep -q "rtid serve status: $tmp/none" "$tmp/err" || fail "status without a daemon says nothing clear"

# No GPUs, no driver.
rm -r "$r/proc/driver/nvidia/gpus/0000:01:00.0" "$r/proc/driver/nvidia/version"
doctor 1 "not c['nvidia-gpus']['ok'] and not c['nvidia-driver']['ok']"
stop
echo "doctor test: every check passes on a good tree and names what is wrong on a bad one"
