#!/bin/sh
# The install works anywhere: an install into a scratch root runs without
# LD_LIBRARY_PATH and finds its worker relative to itself, and the container
# recipe of doc/shim.md (a self-contained rtid and the worker, copied into an
# empty tree) needs nothing but libc.
# Usage: install.sh SOURCE_DIR BUILD_DIR MOCK_LIBCUDA
set -eu
src=$1 build=$2 mock=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM HUP
unset LD_LIBRARY_PATH RTID_WORKER
fail() { echo "install: $*" >&2; exit 1; }

# A real process and the mock driver's answer for it.
sleep 600 </dev/null >/dev/null 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; rm -rf "$work"' EXIT INT TERM HUP
cat > "$work/w.case" <<CASE
title  an installed rtid asks the mock driver
proves the install finds its library and its worker
task   $pid $pid sleep
answer $pid tid $pid
expect driver $pid tid=$pid
CASE

# The install into a scratch root, then moved: nothing may point into the build.
meson install -C "$build" --no-rebuild --quiet --destdir "$work/root" >/dev/null
prefix=$(meson introspect "$build" --buildoptions |
	python3 -c 'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"]=="prefix"][0])')
mv "$work/root" "$work/moved"
bin="$work/moved$prefix/bin/rtid"
[ -x "$bin" ] || fail "no rtid installed at $bin"
v=$("$bin" --version) || fail "installed rtid does not start: $v"
case $v in "rtid "[0-9]*) ;; *) fail "rtid --version printed '$v'" ;; esac
out=$(RTID_CASE="$work/w.case" "$bin" resolve --backend api --libcuda "$mock" --json "$pid") ||
	fail "installed rtid, api backend: $out"
echo "$out" | grep -q "\"tid\": *$pid" || fail "installed rtid, api backend answered: $out"
echo "install: moved prefix ok ($v, api backend found its worker)"

# The container recipe: a self-contained rtid and the worker into an empty tree.
[ "${RTID_SKIP_SELF_CONTAINED:-}" = 1 ] && exit 0
meson setup "$work/sc" "$src" -Dself_contained=true -Dtests=disabled -Dfuse=disabled \
	--prefix=/usr/local >/dev/null
ninja -C "$work/sc" src/rtid src/rtid-cuda-worker >/dev/null
tree="$work/image"
mkdir -p "$tree/usr/local/bin" "$tree/usr/local/libexec" "$tree/opt/rtid/shim"
cp "$work/sc/src/rtid" "$tree/usr/local/bin/rtid"
cp "$work/sc/src/rtid-cuda-worker" "$tree/usr/local/libexec/"
ln -s /usr/local/bin/rtid "$tree/opt/rtid/shim/cuda-checkpoint"
# Only libc's own libraries may be left to the image.
for f in "$tree/usr/local/bin/rtid" "$tree/usr/local/libexec/rtid-cuda-worker"; do
	extra=$(ldd "$f" | grep -v -E '^\s*(linux-vdso|/lib64/ld-linux|lib(c|m|dl|pthread)\.so)' || true)
	[ -z "$extra" ] || fail "$f needs more than libc: $extra"
done
out=$(RTID_CASE="$work/w.case" "$tree/usr/local/bin/rtid" resolve --backend api \
	--libcuda "$mock" --json "$pid") || fail "self-contained rtid, api backend: $out"
echo "$out" | grep -q "\"tid\": *$pid" || fail "self-contained rtid answered: $out"
echo "install: container recipe ok (rtid and the worker need only libc)"
