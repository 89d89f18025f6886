#!/bin/sh
# The install of doc/install.md, run as written (the lines between its
# markers, taken from the document itself so that the two cannot differ)
# into a scratch root, twice (each step can be run again), and checked there
# by the installed rtid doctor --root: every check passes but CRIU's and the
# driver's, which a scratch root lacks.
# Usage: node.sh SOURCE_DIR BUILD_DIR MOCK_LIBCUDA
set -eu
src=$1 build=$2 mock=$3
T=$(mktemp -d)
daemon=""
trap '[ -n "$daemon" ] && kill $daemon 2>/dev/null; wait 2>/dev/null; rm -rf "$T"' EXIT INT TERM HUP
fail() { echo "install-node: FAIL: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "install-node: needs root (the install makes root's files)"; exit 77; }
# The documented build is plain; its worker cannot load a sanitized build's
# mock libcuda (the sanitizer's runtime must come first), so its daemon
# would never attach. The plain build runs this test.
[ -z "${RTID_UNDER_SANITIZER:-}" ] || { echo "install-node: the plain node build cannot load a sanitized mock driver"; exit 77; }
unset LD_LIBRARY_PATH RTID_WORKER RTID_SOCKET RTID_REAL_TOOL RTID_CUDA_CHECKPOINT

# The document's blocks, indented code between <!-- install:NAME --> and
# <!-- install:end -->; build-node is the node build, kept beside the test
# build (BUILD_DIR-node, not in it: no program of a test build's tree may hold
# the node's paths, which the hermetic test checks), so that a rerun builds
# only what changed.
block() {
	sed -n "/^<!-- install:$1 -->\$/,/^<!-- install:end -->\$/p" "$src/doc/install.md" |
		sed -n 's/^    //p' | sed "s|build-node|${build%/}-node|g"
}
block build > "$T/build.sh"
block steps > "$T/steps.sh"
[ -s "$T/build.sh" ] && [ -s "$T/steps.sh" ] || fail "no install blocks in doc/install.md"
(cd "$src" && sh -e "$T/build.sh") > "$T/build.log" 2>&1 || fail "the build step: $(tail -5 "$T/build.log")"

mkdir "$T/work"
# NVIDIA's tool, as CRIU's plugin needs its -h (exit 0, --action in it).
printf '#!/bin/sh\necho "Usage: cuda-checkpoint --action lock|checkpoint|restore|unlock --pid PID"\n' \
	> "$T/work/cuda-checkpoint"
r=$T/root
for run in 1 2; do
	(cd "$T/work" && ROOT=$r sh -e "$T/steps.sh") > "$T/steps.log" 2>&1 ||
		fail "the install steps, run $run: $(tail -5 "$T/steps.log")"
done
# Step 4: one libdir for CRIU, rtid's plugin's directory where the build made
# the plugin (it finds the CRIU source beside the tree), and doctor, reading
# the same line, finds the plugin there.
[ "$(grep -c '^libdir ' "$r/etc/criu/runc.conf")" = 1 ] ||
	fail "step 4 run twice: $(cat "$r/etc/criu/runc.conf")"
plugin=$(cd "$r" && find usr/lib -path '*/rtid/criu/cuda_plugin.so')
if [ -n "$plugin" ]; then
	grep -qx "libdir /${plugin%/cuda_plugin.so}" "$r/etc/criu/runc.conf" ||
		fail "step 4 does not name rtid's plugin (/$plugin): $(cat "$r/etc/criu/runc.conf")"
else
	grep -qx 'libdir /usr/lib/criu' "$r/etc/criu/runc.conf" ||
		fail "no rtid plugin built, and step 4 names no CRIU libdir: $(cat "$r/etc/criu/runc.conf")"
fi

# The layout the document promises.
for f in usr/bin/rtid usr/libexec/rtid-cuda-worker usr/lib/systemd/system/rtid.socket \
	usr/lib/systemd/system/rtid.service etc/rtid/shim.conf; do
	[ -e "$r/$f" ] || fail "no /$f installed"
done
[ -d "$r/var/lib/rtid" ] && [ "$(stat -c %a "$r/var/lib/rtid")" = 755 ] || fail "no /var/lib/rtid (0755)"
[ "$(readlink -f "$r/usr/local/sbin/cuda-checkpoint")" = "$r/usr/bin/rtid" ] ||
	fail "the shim link does not reach /usr/bin/rtid"
grep -q '^ExecStart=/usr/bin/rtid serve --actions$' "$r/usr/lib/systemd/system/rtid.service" ||
	fail "the unit's ExecStart: $(grep ExecStart "$r/usr/lib/systemd/system/rtid.service")"
grep -q '^[^#]' "$r/etc/rtid/shim.conf" && fail "the shipped settings file sets something"
# Under /usr/local only what the operator put there: NVIDIA's tool and the link.
local=$(cd "$r" && find usr/local ! -type d | sort | tr '\n' ' ')
[ "$local" = "usr/local/bin/cuda-checkpoint usr/local/sbin/cuda-checkpoint " ] ||
	fail "under /usr/local: $local"

# The daemon as the unit runs it, on the mock driver, at the tree's own socket
# (the tree's /run/rtid/rtid.sock). doctor --root judges the tree alone: no
# RTID_SHIM_CONF, RTID_SOCKET nor RTID_ATTESTATION of ours (those of this
# shell, set to elsewhere, must not count).
export RTID_SHIM_CONF="$T/elsewhere.conf" RTID_SOCKET="$T/elsewhere.sock" RTID_ATTESTATION="$T/none.json"
mkdir -p "$r/run/rtid"
printf 'title d\nproves d\ndriver 580.159.03\nbackend api\ntask 1 1 init\nanswer 1 none\nexpect driver 1 tid=none\n' > "$T/c.case"
mkfifo "$T/ready"
# shellcheck disable=SC2046 # the unit's options, split as systemd splits them
RTID_CASE=$T/c.case "$r/usr/bin/rtid" serve $(sed -n 's/^ExecStart=[^ ]*rtid serve//p' \
	"$r/usr/lib/systemd/system/rtid.service") --socket "$r/run/rtid/rtid.sock" --libcuda "$mock" --ready-fd 3 \
	3> "$T/ready" 2> "$T/serve.log" &
daemon=$!
read -r _ < "$T/ready"
set +e
"$r/usr/bin/rtid" doctor --root "$r" --json > "$T/d.json"
set -e
python3 - "$T/d.json" "$plugin" <<'PY' || fail "doctor --root: $(cat "$T/d.json")"
import json, sys
o = json.load(open(sys.argv[1]))
absent = {'criu', 'criu-version', 'nvidia-gpus', 'nvidia-driver'}
# Only where rtid's plugin was built is there a plugin in the tree for doctor to find.
if not sys.argv[2]:
    absent.add('criu-cuda-plugin')
bad = [c['name'] for c in o['checks'] if not c['ok'] and c['name'] not in absent]
need = {'shim-settings', 'shim-on-path', 'tool-help', 'real-tool', 'rtid-serve'}
if sys.argv[2]:
    need.add('criu-cuda-plugin')
have = {c['name'] for c in o['checks'] if c['ok']}
assert not bad and need <= have, (bad, need - have)
PY
python3 -c "import json,sys; [print(\"  \", \"ok  \" if c[\"ok\"] else \"FAIL\", c[\"name\"]) for c in json.load(open(sys.argv[1]))[\"checks\"]]" "$T/d.json"
echo "install-node: doc/install.md run twice into a scratch root; rtid doctor --root passes it"
