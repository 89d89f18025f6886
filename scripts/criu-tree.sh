#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The CRIU source tree rtid's plugin is built against, made ready at configure
# time: SOURCE is a tree or a `git archive` tarball (unpacked into OUT/src),
# and OUT/stub holds what CRIU's own build would generate and the plugin's
# headers need (symlinks into the tree, two one-line headers). Prints
# "tree=DIR", "stub=DIR", "version=X.Y[.Z]" on success, else "error=WHY"
# (exit 0 either way: meson's summary says why the plugin is not built).
#
#   criu-tree.sh SOURCE OUT CPU_FAMILY
set -u
src=$1 out=$2 cpu=$3

fail() { echo "error=$*"; exit 0; }

case $cpu in
x86_64) arch=x86 ;;
*) fail "CPU family $cpu: only x86_64 is wired up" ;;
esac
[ -e "$src" ] || fail "no CRIU source at $src"
if [ -f "$src" ]; then
	# Unpack once per tarball: a stamp holds the tarball's size and time.
	stamp=$(stat -c '%s %Y' "$src") || fail "cannot read $src"
	if [ "$(cat "$out/src.stamp" 2>/dev/null)" != "$stamp" ]; then
		rm -rf "$out/src" "$out/src.stamp"
		mkdir -p "$out/src" || fail "cannot make $out/src"
		tar -xzf "$src" -C "$out/src" --strip-components=1 ||
			fail "cannot unpack $src"
		echo "$stamp" > "$out/src.stamp"
	fi
	tree=$out/src
else
	tree=$(cd "$src" && pwd) || fail "cannot enter $src"
fi
for f in criu/include/criu-plugin.h criu/include/cr_options.h Makefile.versions \
	compel/include/uapi/infect.h; do
	[ -f "$tree/$f" ] || fail "$tree is not a CRIU source tree (no $f)"
done

get() { sed -n "s/^$1[[:space:]]*:=[[:space:]]*//p" "$tree/Makefile.versions" | head -1; }
version=$(get CRIU_VERSION_MAJOR)
for part in "$(get CRIU_VERSION_MINOR)" "$(get CRIU_VERSION_SUBLEVEL)" "$(get CRIU_VERSION_EXTRA)"; do
	[ -n "$part" ] && version=$version.$part
done
case $version in
[0-9]*.[0-9]*) ;;
*) fail "no version in $tree/Makefile.versions" ;;
esac

stub=$out/stub
rm -rf "$stub"
mkdir -p "$stub/sys" "$stub/common" "$stub/images" "$stub/compel/plugins/std/asm" ||
	fail "cannot make $stub"
# cr_options.h needs only _LINUX_CAPABILITY_U32S_3 of libcap's header.
echo '#include <linux/capability.h>' > "$stub/sys/capability.h"
# CRIU's feature tests write common/config.h; nothing the plugin reads depends on it.
: > "$stub/common/config.h"
echo '#include <asm/unistd.h>' > "$stub/compel/plugins/std/syscall-codes.h"
# pstree.h wants a header protobuf-c generates: struct pstree_item holds
# pointers to these only; its inline functions (the plugin calls none) read
# files_id.
cat > "$stub/images/core.pb-c.h" <<'END'
typedef struct _CoreEntry CoreEntry;
typedef struct _TaskKobjIdsEntry {
	unsigned files_id;
} TaskKobjIdsEntry;
END
ln -s "$tree/include/common/arch/$arch/asm" "$stub/common/asm"
ln -s "$tree/compel/arch/$arch/src/lib/include/uapi/asm" "$stub/compel/asm"
ln -s "$tree/compel/arch/$arch/plugins/include/asm/syscall-types.h" \
	"$stub/compel/plugins/std/asm/syscall-types.h"
echo "tree=$tree"
echo "stub=$stub"
echo "version=$version"
echo "arch=$arch"
