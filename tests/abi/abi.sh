#!/bin/sh
# The library's interface is exactly what rtid.h promises: the functions it
# marks RTID_EXPORT, the version script's list and the shared library's
# dynamic symbols are one set, each versioned; and the internal headers
# define no type or macro in the public name space (rtid_, RTID_), which is
# rtid.h's alone: internal names take rtid__ / RTID__.
# Usage: abi.sh SOURCE_DIR LIBRTID_SO
set -eu
src=$1 so=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM HUP
bad=0
miss() { echo "abi: $*" >&2; bad=1; }
command -v nm > /dev/null || { echo "abi: nm (binutils) is not installed" >&2; exit 77; }

hdr="$src/include/rtid.h"
grep -A2 RTID_EXPORT "$hdr" | grep -o -E 'rtid_[a-z0-9_]+\(' | tr -d '(' | sort -u > "$work/header"
sed -n 's/^[[:space:]]*\(rtid_[a-z0-9_]*\);$/\1/p' "$src/src/core/librtid.sym" | sort -u > "$work/script"
nm -D --defined-only "$so" | awk '$2 ~ /^[TDBRW]$/ { print $3 }' > "$work/dynamic"
sed 's/@.*//' "$work/dynamic" | sort -u > "$work/exported"
[ -s "$work/header" ] || miss "no RTID_EXPORT function found in $hdr"
for f in $(comm -23 "$work/header" "$work/script"); do miss "$f is RTID_EXPORT but not in librtid.sym"; done
for f in $(comm -13 "$work/header" "$work/script"); do miss "$f is in librtid.sym but not RTID_EXPORT in rtid.h"; done
for f in $(comm -3 "$work/header" "$work/exported" | tr -d '\t'); do
	miss "$f: the header and the library's exports differ"
done
grep -v -E '@@?LIBRTID_[0-9]' "$work/dynamic" | while read -r f; do
	echo "abi: $f is exported without a version" >&2; echo x
done | grep -q x && bad=1

# Public names belong to rtid.h: a type that an internal header defines is
# either rtid.h's opaque type or internal by its name.
grep -o -E '^(struct|enum) rtid_[a-z][a-z0-9_]*' "$hdr" | sort -u > "$work/public-types"
for h in "$src"/src/*/*.h; do
	[ "$h" = "$hdr" ] && continue
	grep -o -E '^(struct|enum) rtid_[a-z][a-z0-9_]* \{' "$h" | sed 's/ {$//' | while read -r t; do
		grep -q -x -F "$t" "$work/public-types" ||
			echo "abi: ${h#"$src"/}: '$t' is named like public API but is not in rtid.h" >&2
	done
	grep -o -E '^#define RTID_[A-Z][A-Z0-9_]*' "$h" | grep -v -E '_H$' | while read -r _ m; do
		echo "abi: ${h#"$src"/}: macro $m is named like public API (internal: RTID__)" >&2
	done
done 2> "$work/names"
[ -s "$work/names" ] && { cat "$work/names" >&2; bad=1; }
[ "$bad" = 0 ] && echo "abi: $(wc -l < "$work/header") functions, header = version script = exports, internal names apart"
exit "$bad"
