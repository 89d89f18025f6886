#!/bin/sh
# The Debian packages unpacked into a scratch root (dpkg -x) work from there:
# the CLI starts, the shim link points at it, and the api backend finds the
# packaged worker relative to the program.
# Usage: deb.sh DEB_DIR MOCK_LIBCUDA
set -eu
debs=$1 mock=$2
root=$(mktemp -d)
sleep 600 </dev/null >/dev/null 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; rm -rf "$root"' EXIT INT TERM HUP
fail() { echo "deb: $*" >&2; exit 1; }
for p in rtid librtid0 librtid-dev; do
	f=$(ls "$debs"/${p}_*.deb) || fail "no $p package in $debs"
	dpkg -x "$f" "$root"
done
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
export LD_LIBRARY_PATH="$root/usr/lib/$multiarch"
unset RTID_WORKER
# The packages carry the node's defaults: nothing of the node's is used here.
export RTID_SOCKET="$root/rtid.sock" RTID_ATTESTATION="$root/attestation.json" RTID_SHIM_CONF=
v=$("$root/usr/bin/rtid" --version) || fail "rtid does not start from the scratch root"
[ "$(readlink -f "$root/usr/lib/rtid/shim/cuda-checkpoint")" = "$root/usr/bin/rtid" ] ||
	fail "the shim link does not point at rtid"
# The layout of doc/install.md: the commented settings file, the attestation's directory.
[ -f "$root/etc/rtid/shim.conf" ] && ! grep -q '^[^#]' "$root/etc/rtid/shim.conf" ||
	fail "no commented /etc/rtid/shim.conf"
[ -d "$root/var/lib/rtid" ] || fail "no /var/lib/rtid"
[ -f "$root/usr/include/rtid.h" ] && [ -f "$root/usr/lib/$multiarch/pkgconfig/rtid.pc" ] ||
	fail "librtid-dev lacks the header or the pkg-config file"
cat > "$root/w.case" <<CASE
title  the packaged rtid asks the mock driver
proves the packages hold a working CLI, library and worker
task   $pid $pid sleep
answer $pid tid $pid
expect driver $pid tid=$pid
CASE
out=$(RTID_CASE="$root/w.case" "$root/usr/bin/rtid" resolve --backend api --libcuda "$mock" \
	--json "$pid") || fail "packaged rtid, api backend: $out"
echo "$out" | grep -q "\"tid\": *$pid" || fail "packaged rtid answered: $out"
echo "deb: packages work from a scratch root ($v)"
