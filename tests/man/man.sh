#!/bin/sh
# The manuals tell the whole truth about the interface: every command and
# option of every --help is in rtid(1) and every option there is in some
# --help; every environment variable the code reads is in rtid(1)'s
# ENVIRONMENT; every function the header exports is in librtid(3); and all
# of them, and the Debian changelog, carry the version rtid --version says.
# Usage: man.sh SOURCE_DIR RTID_BINARY
set -eu
src=$1 rtid=$2
man1="$src/man/rtid.1" man3="$src/man/librtid.3" hdr="$src/include/rtid.h"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM HUP
bad=0
miss() { echo "man: $*" >&2; bad=1; }
# The man source with roff's escaped hyphens plain, and one section of it.
sed 's/\\-/-/g' "$man1" > "$work/man1"
section() { awk -v s="$1" '/^\.SH/ { on = ($0 ~ "^\\.SH \"?" s) ; next } on' "$work/man1"; }

# Commands: the first word of each line of the overview's "Commands:" list.
"$rtid" --help > "$work/help"
cmds=$(awk '/^Commands:/ { on = 1; next } on && /^$/ { on = 0 } on { print $1 }' "$work/help" |
	grep -v -e '^help$' -e '^--' || true)
[ -n "$cmds" ] || miss "no commands found in rtid --help"
for c in $cmds; do
	"$rtid" "$c" --help >> "$work/help" 2>&1 || miss "rtid $c --help failed"
	section COMMANDS | grep -q -E "^\.B $c( |\$)" || miss "command '$c' is not in rtid(1)'s COMMANDS"
	# And in the SYNOPSIS and the EXIT STATUS (doctor once lacked both).
	section SYNOPSIS | grep -q -E "^\.B rtid $c( |\$)" || miss "command '$c' is not in rtid(1)'s SYNOPSIS"
	section "EXIT STATUS" | grep -q -E "^\.B $c( |\$)" || miss "command '$c' is not in rtid(1)'s EXIT STATUS"
done
section SYNOPSIS | grep -q -E "^\.B rtid serve status" || miss "serve status is not in rtid(1)'s SYNOPSIS"

# Options, both ways.
grep -o -E -- '--[a-z][a-z0-9-]*' "$work/help" | sort -u > "$work/help-opts"
section OPTIONS | grep -o -E -- '--[a-z][a-z0-9-]*' | sort -u > "$work/man-opts"
for o in $(comm -23 "$work/help-opts" "$work/man-opts"); do
	grep -q -- "$o" "$work/man1" || miss "option $o of --help is not in rtid(1)"
done
for o in $(comm -13 "$work/help-opts" "$work/man-opts"); do
	miss "option $o of rtid(1)'s OPTIONS is in no --help"
done

# Environment variables read by the code.
for v in $(grep -h -o -E 'getenv\("[A-Z_]+"\)' "$src"/src/*.c "$src"/src/*/*.c | sed 's/getenv("\(.*\)")/\1/' | sort -u); do
	section ENVIRONMENT | grep -q -E "^\.B $v\$" || miss "$v is read by rtid but not in rtid(1)'s ENVIRONMENT"
done

# Exported functions.
for f in $(grep -A2 RTID_EXPORT "$hdr" | grep -o -E 'rtid_[a-z_]+\(' | tr -d '(' | sort -u); do
	grep -q -E "$f( \(\)|\()" "$man3" || miss "$f is exported but not in librtid(3)"
done
# Every constant, enum value and struct field of the header, in librtid(3)'s
# TYPES AND CONSTANTS: each under its own .SS heading, as a .B (constant,
# value) or .I (field) line. The enums' *_MAX counts are not values.
sed 's/\\-/-/g' "$man3" > "$work/man3"
ss() { awk -v s="$1" '/^\.S[SH]/ { on = ($0 == ".SS " s); next } on' "$work/man3"; }
for c in $(sed -n 's/^#define \(RTID_[A-Z_]*\).*/\1/p' "$hdr" | grep -v -x -e RTID_H -e RTID_EXPORT); do
	ss Constants | grep -q -x "\.B $c" || miss "constant $c is not in librtid(3)"
done
awk '
/^(enum|struct) rtid_[a-z_]+ \{/ { kind = $1; name = $1 " " $2; next }
name && /^\};/ { name = ""; next }
name && /^[ \t]*\*/ { next }
name {
	sub(/\/\*.*/, ""); sub(/;.*/, "")
	if (kind == "enum") { gsub(/[ \t,]/, ""); if ($0 != "" && $0 !~ /^RTID__/) print name "|.B " $0; next }
	n = split($0, part, ",")
	for (i = 1; i <= n; i++) {
		f = part[i]; sub(/\[.*/, "", f); gsub(/^.*[ \t*]/, "", f)
		if (f != "") print name "|.I " f
	}
}' "$hdr" > "$work/members"
[ -s "$work/members" ] || miss "no enums or structs found in rtid.h"
while IFS='|' read -r owner line; do
	ss "$owner" | grep -q -x -F "$line" || miss "$owner: '${line#.? }' is not in librtid(3)"
done < "$work/members"

# One version: what rtid --version says is in every manual's header and in
# the Debian changelog (the meson project's version is the source of both).
v=$("$rtid" --version | sed -n 's/^rtid \([0-9][0-9.]*\).*/\1/p')
[ -n "$v" ] || miss "rtid --version gave no version"
for m in "$src"/man/*.[1-8]; do
	grep -q -E "^\.TH .*\"rtid $v\"" "$m" || miss "${m#"$src"/}: .TH does not say rtid $v"
done
head -n 1 "$src/debian/changelog" | grep -q -F "rtid ($v-" ||
	miss "debian/changelog does not begin with version $v"

[ "$bad" = 0 ] && echo "man: rtid(1) and librtid(3) cover every command, option, variable, function, type, field and value"
exit "$bad"
