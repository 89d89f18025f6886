#!/bin/sh
# The settings file the plugin's engine test writes under a build's own
# defaults (RTID_NODE_ROOT/etc/rtid/shim.conf): one rule for whoever finds
# it, engine.sh before it writes one and hermetic.py before it runs the
# build's programs with their defaults.
#
#   node-conf.sh --marker        the first line's text, before the writer's pid
#   node-conf.sh FILE [SELF]     0: FILE is absent now (one left by a run that
#                                ended without its clean-up is removed, and
#                                said on stdout); 1: FILE is not to be touched
#                                (why on stdout): a link, another's file, or
#                                in use by a live run other than SELF's pid
set -u
marker="# written by tests/engine/engine.sh (engine-runc-plugin), removed when it ends; pid"
if [ "${1:-}" = --marker ]; then
	echo "$marker"
	exit 0
fi
file=$1
self=${2:-0}
if [ -L "$file" ]; then
	echo "$file is a link, not this test's file"
	exit 1
fi
[ -e "$file" ] || exit 0
first=$(head -n 1 "$file" 2> /dev/null || true)
case "$first" in
"$marker "*) writer=${first#"$marker "} ;;
*) echo "$file exists and is not this test's"; exit 1 ;;
esac
case "$writer" in
'' | *[!0-9]*) echo "$file exists and is not this test's"; exit 1 ;;
esac
if [ "$writer" != "$self" ] &&
	tr '\0' ' ' < "/proc/$writer/cmdline" 2> /dev/null | grep -q 'engine\.sh'; then
	echo "$file is in use by a run of this test (pid $writer)"
	exit 1
fi
rm -f "$file" || { echo "cannot remove $file, left by a run that ended without its clean-up (pid $writer)"; exit 1; }
echo "removed $file, left by a run that ended without its clean-up (pid $writer)"
