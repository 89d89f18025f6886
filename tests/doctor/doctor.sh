#!/bin/sh
# rtid doctor on a node tree built here (--root): all well passes (exit 0),
# and each thing a user gets wrong is named with its fix (exit 1): no shim
# first on the engines' PATH, the real tool before it, a daemon that serves
# queries only or is not there, CRIU's libdir without the CUDA plugin, a bad
# line in the shim's settings file.
set -eu
rtid=$RTID_BIN
tmp=$(mktemp -d)
daemon=""
trap '[ -n "$daemon" ] && kill $daemon 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
fail() { echo "doctor test: $*" >&2; exit 1; }

r=$tmp/root
mkdir -p "$r/usr/local/sbin" "$r/usr/bin" "$r/usr/sbin" "$r/usr/lib/criu" "$r/etc/criu" \
	"$r/proc/driver/nvidia/gpus/0000:01:00.0"
ln -s "$rtid" "$r/usr/local/sbin/cuda-checkpoint"
printf '#!/bin/sh\nexit 0\n' > "$r/usr/bin/cuda-checkpoint"
printf '#!/bin/sh\necho Version: 4.2\n' > "$r/usr/sbin/criu"
chmod 755 "$r/usr/bin/cuda-checkpoint" "$r/usr/sbin/criu"
: > "$r/usr/lib/criu/cuda_plugin.so"
printf 'NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.03  Thu Jan  1 2026\n' \
	> "$r/proc/driver/nvidia/version"
printf 'RTID_SOCKET=%s/s\n' "$tmp" > "$tmp/shim.conf"
export RTID_SHIM_CONF=$tmp/shim.conf
unset RTID_SOCKET RTID_REAL_TOOL
printf 'title d\nproves d\ndriver 580.159.03\nbackend api\ntask 1 1 init\nanswer 1 none\nexpect driver 1 tid=none\n' > "$tmp/c.case"
export RTID_CASE=$tmp/c.case

serve() { # extra options: rtid serve on $tmp/s, ready when this returns
	mkfifo "$tmp/ready"
	"$rtid" serve --socket "$tmp/s" --libcuda "$MOCK_LIBCUDA" --ready-fd 3 "$@" \
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

serve --actions
doctor 0 "ok and all(x['ok'] for x in o['checks']) and len(c) == 10 and c['criu-version']['detail'] == 'CRIU 4.2'"
"$rtid" doctor --root "$r" | grep -q "^all well$" || fail "the words do not say all is well"

# The daemon serves queries only: named, with the fix.
stop
serve
doctor 1 "not c['rtid-serve']['ok'] and 'queries only' in c['rtid-serve']['detail'] and '--actions' in c['rtid-serve']['fix']"
stop
# No daemon at all.
doctor 1 "not c['rtid-serve']['ok'] and 'no socket' in c['rtid-serve']['detail']"
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
printf '#!/bin/sh\nexit 0\n' > "$r/usr/bin/cuda-checkpoint"
chmod 755 "$r/usr/bin/cuda-checkpoint"
doctor 0 "c['real-tool']['ok']"

# No plugin anywhere; then runc.conf names a libdir without the plugin.
mv "$r/usr/lib/criu/cuda_plugin.so" "$tmp/plugin.so"
doctor 1 "not c['criu-cuda-plugin']['ok'] and 'no cuda_plugin.so' in c['criu-cuda-plugin']['detail']"
mv "$tmp/plugin.so" "$r/usr/lib/criu/cuda_plugin.so"
mkdir -p "$r/opt/criu"
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

# A bad line in the shim's settings, and a file others may write.
printf 'RTID_SOCKET=%s/s\nRTID_BOGUS=1\n' "$tmp" > "$tmp/shim.conf"
doctor 1 "not c['shim-settings']['ok'] and 'line 2' in c['shim-settings']['detail']"
printf 'RTID_SOCKET=%s/s\n' "$tmp" > "$tmp/shim.conf"
chmod 0666 "$tmp/shim.conf"
doctor 1 "not c['shim-settings']['ok'] and 'writable by group or others' in c['shim-settings']['detail']"
chmod 0644 "$tmp/shim.conf"

# The settings: none at all, none there, a directory, too large, a line
# with blanks around it; RTID_REAL_TOOL from the file, missing or rtid itself.
RTID_SHIM_CONF= "$rtid" doctor --root "$r" --json > "$tmp/o.json" || true
grep -q '"detail": "none (RTID_SHIM_CONF is empty)"' "$tmp/o.json" || fail "an empty RTID_SHIM_CONF is not none"
RTID_SHIM_CONF=$tmp/absent RTID_SOCKET=$tmp/s "$rtid" doctor --root "$r" --json > "$tmp/o.json" ||
	fail "no settings file is no fault: $(cat "$tmp/o.json")"
grep -q 'absent: none' "$tmp/o.json" || fail "a missing settings file is not said"
mkdir "$tmp/confdir"
RTID_SHIM_CONF=$tmp/confdir RTID_SOCKET=$tmp/s "$rtid" doctor --root "$r" --json > "$tmp/o.json" && fail "a directory passed"
grep -q 'not a regular file' "$tmp/o.json" || fail "a directory as settings is not named"
head -c 20000 /dev/zero | tr '\0' '#' > "$tmp/big.conf"
RTID_SHIM_CONF=$tmp/big.conf RTID_SOCKET=$tmp/s "$rtid" doctor --root "$r" --json > "$tmp/o.json" && fail "a huge file passed"
grep -q 'larger than 16 KiB' "$tmp/o.json" || fail "a huge settings file is not named"
printf '  RTID_SOCKET=%s/s \t\r\n\n\t# c\nRTID_REAL_TOOL=%s/nothing\n' "$tmp" "$tmp" > "$tmp/shim.conf"
doctor 1 "c['shim-settings']['ok'] and not c['real-tool']['ok'] and 'not an executable' in c['real-tool']['detail']"
printf 'RTID_SOCKET=%s/s\nRTID_REAL_TOOL=%s\n' "$tmp" "$rtid" > "$tmp/shim.conf"
doctor 1 "not c['real-tool']['ok'] and 'rtid itself' in c['real-tool']['detail']"
printf 'RTID_SOCKET=%s/s\nRTID_REAL_TOOL=%s/usr/bin/cuda-checkpoint\n' "$tmp" "$r" > "$tmp/shim.conf"
doctor 0 "c['real-tool']['ok'] and c['real-tool']['detail'].startswith('RTID_REAL_TOOL=')"
printf 'RTID_SOCKET=%s/s\n' "$tmp" > "$tmp/shim.conf"
# Another user's file; many bad lines (the first 8 named); the environment
# over the file for the socket and the real tool.
chown 65534 "$tmp/shim.conf"
doctor 1 "not c['shim-settings']['ok'] and 'owned by another user' in c['shim-settings']['detail']"
chown 0 "$tmp/shim.conf"
printf 'a\n=b\nc\nd\ne\nf\ng\nh\ni\nj\n' > "$tmp/shim.conf"
doctor 1 "'line 1, 2, 3, 4, 5, 6, 7, 8:' in c['shim-settings']['detail']"
printf 'RTID_SOCKET=%s/nowhere\nRTID_REAL_TOOL=%s/nothing\n' "$tmp" "$tmp" > "$tmp/shim.conf"
RTID_SOCKET=$tmp/s RTID_REAL_TOOL=$r/usr/bin/cuda-checkpoint "$rtid" doctor --root "$r" --json > "$tmp/o.json" ||
	fail "the environment did not win over the file: $(cat "$tmp/o.json")"
printf 'RTID_SOCKET=%s/s\n' "$tmp" > "$tmp/shim.conf"

# The daemon's socket: another user's, one nobody answers on, a daemon that
# cannot attach.
stop
serve --actions
chown 65534 "$tmp/s"
doctor 1 "not c['rtid-serve']['ok'] and 'owned by uid 65534' in c['rtid-serve']['detail']"
chown 0 "$tmp/s"
kill -9 "$daemon"; wait "$daemon" 2>/dev/null || true; daemon=""
doctor 1 "not c['rtid-serve']['ok'] and 'cannot connect' in c['rtid-serve']['detail']"
rm -f "$tmp/s"
RTID_CASE=$tmp/nothing serve --actions
doctor 1 "not c['rtid-serve']['ok'] and 'not attached' in c['rtid-serve']['detail']"
stop
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
export RTID_ATTESTATION=$tmp/att.json
RTID_MODE=scan doctor 1 "not c['scan-attested']['ok'] and '0 of 10' in c['scan-attested']['detail'] and 'rtid validate' in c['scan-attested']['fix']"
printf 'RTID_SOCKET=%s/s\nRTID_MODE=canary\n' "$tmp" > "$tmp/shim.conf"
doctor 1 "not c['scan-attested']['ok'] and 'falls back' in c['scan-attested']['detail']"
printf '{"format": 1, "drivers": {"580.159.03": {"agree": 10, "agree_none": 0, "mismatch": 0, "revoked": false}}}\n' > "$tmp/att.json"
doctor 0 "c['scan-attested']['ok'] and c['scan-attested']['detail'].startswith('driver 580.159.03: attested (10 of 10')"
printf '{"format": 1, "drivers": {"580.159.03": {"agree": 12, "agree_none": 0, "mismatch": 1, "revoked": false}}}\n' > "$tmp/att.json"
doctor 1 "not c['scan-attested']['ok'] and 'revoked' in c['scan-attested']['detail']"
printf 'not json' > "$tmp/att.json"
doctor 1 "not c['scan-attested']['ok'] and 'att.json' in c['scan-attested']['detail']"
# An attestation others may write is not trusted: nothing in it counts.
printf '{"format": 1, "drivers": {"580.159.03": {"agree": 10, "agree_none": 0, "mismatch": 0, "revoked": false}}}\n' > "$tmp/att.json"
chmod 0666 "$tmp/att.json"
doctor 1 "not c['scan-attested']['ok'] and 'not trusted' in c['scan-attested']['detail']"
chmod 0644 "$tmp/att.json"
# The environment's mode wins over the file's; a mode that is none scans nothing.
RTID_MODE=driver doctor 0 "'driver mode does not scan' in c['scan-attested']['detail']"
RTID_MODE=bogus doctor 0 "c['scan-attested']['ok']"
RTID_MODE= doctor 0 "c['scan-attested']['ok']"
# RTID_ATTESTATION set and empty: the default file under the root, none there.
RTID_ATTESTATION= RTID_MODE=scan doctor 1 "'0 of 10' in c['scan-attested']['detail']"
printf 'RTID_SOCKET=%s/s\n' "$tmp" > "$tmp/shim.conf"
doctor 0 "c['scan-attested']['ok']"
unset RTID_ATTESTATION

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
"$rtid" serve status --socket "$tmp/s" | grep -q '^attaches 1$' || fail "status in words"
"$rtid" serve status --help | grep -q -- '--prometheus' || fail "status help"
"$rtid" serve status --bogus 2> /dev/null && fail "status took a bad option"
"$rtid" serve status --socket "$tmp/none" 2> "$tmp/err" && fail "status without a daemon passed"
grep -q "rtid serve status: $tmp/none" "$tmp/err" || fail "status without a daemon says nothing clear"

# No GPUs, no driver.
rm -r "$r/proc/driver/nvidia/gpus/0000:01:00.0" "$r/proc/driver/nvidia/version"
doctor 1 "not c['nvidia-gpus']['ok'] and not c['nvidia-driver']['ok']"
stop
echo "doctor test: every check passes on a good tree and names what is wrong on a bad one"
