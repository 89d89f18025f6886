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
opt() { meson introspect "$build" --buildoptions | python3 -c '
import json, sys
v = [o["value"] for o in json.load(sys.stdin) if o["name"] == sys.argv[1]][0]
print(",".join(v) if isinstance(v, list) else v)' "$1"; }

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
# A build with its tests keeps its defaults under its tree (-Ddefaults), and
# its install is refused unless asked for, as here; none is asked outright.
if [ "$(opt defaults)" != node ]; then
	meson install -C "$build" --no-rebuild --quiet --destdir "$work/refused" >/dev/null 2>&1 &&
		fail "meson install of a build with its defaults under its tree was not refused"
fi
RTID_INSTALL_TEST_DEFAULTS=1 meson install -C "$build" --no-rebuild --quiet --destdir "$work/root" >/dev/null
prefix=$(meson introspect "$build" --buildoptions |
	python3 -c 'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"]=="prefix"][0])')
mv "$work/root" "$work/moved"
bin="$work/moved$prefix/bin/rtid"
[ -x "$bin" ] || fail "no rtid installed at $bin"
[ -f "$work/moved$prefix/share/bash-completion/completions/rtid" ] ||
	fail "no bash completion installed under $prefix/share/bash-completion/completions"
v=$("$bin" --version) || fail "installed rtid does not start: $v"
case $v in "rtid "[0-9]*) ;; *) fail "rtid --version printed '$v'" ;; esac
out=$(RTID_CASE="$work/w.case" "$bin" resolve --backend api --libcuda "$mock" --json "$pid") ||
	fail "installed rtid, api backend: $out"
echo "$out" | grep -q "\"tid\": *$pid" || fail "installed rtid, api backend answered: $out"
echo "install: moved prefix ok ($v, api backend found its worker)"

# A program built against the installed header and library, as a user's is:
# RTID_CONFIG_INIT, the versioned exports, rtid_version() = rtid --version.
# A sanitized library needs its runtime first in the program, as a user's
# sanitized build would have it.
san=$(opt b_sanitize) sanflags=
[ "$san" = none ] || [ -z "$san" ] || sanflags="-fsanitize=$san"

inc="$work/moved$prefix/$(opt includedir)" lib="$work/moved$prefix/$(opt libdir)"
cat > "$work/user.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <rtid.h>
int main(int argc, char **argv)
{
	struct rtid_config cfg = { RTID_CONFIG_INIT, .backend = RTID_BACKEND_API, .libcuda = argv[1] };
	struct rtid_ctx *ctx;
	struct rtid_result r;

	if (argc != 3 || rtid_ctx_new(&cfg, &ctx) < 0 || rtid_resolve(ctx, (int)strtol(argv[2], NULL, 10), &r) < 0)
		return 2;
	printf("%s %d %s\n", rtid_version(), r.tid, rtid_source_name(r.source));
	rtid_ctx_free(ctx);
	return 0;
}
C
cc -Wall -Werror $sanflags -I"$inc" -o "$work/user" "$work/user.c" -L"$lib" -lrtid ||
	fail "a program does not build against the installed rtid.h and librtid"
worker=$(find "$work/moved" -name rtid-cuda-worker -type f | head -n 1)
out=$(RTID_CASE="$work/w.case" RTID_WORKER="$worker" LD_LIBRARY_PATH="$lib" "$work/user" "$mock" "$pid") ||
	fail "the user's program failed: $out"
[ "$out" = "${v#rtid } $pid api" ] || fail "the user's program printed '$out', not '${v#rtid } $pid api'"
echo "install: a program built on the installed header resolved $pid ($out)"

# The container recipe: a self-contained rtid and the worker into an empty tree.
[ "${RTID_SKIP_SELF_CONTAINED:-}" = 1 ] && exit 0
# Its defaults under its own build tree (-Ddefaults=build): a test reaches
# nothing of the node's.
meson setup "$work/sc" "$src" -Dself_contained=true -Dtests=disabled -Dfuse=disabled \
	-Ddefaults=build --prefix=/usr/local >/dev/null
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
