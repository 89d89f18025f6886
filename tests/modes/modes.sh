#!/bin/sh
# Nothing outside a test's own temporary directory changes across the suite:
# the devices a test links to (/dev/null and its kin, the GPU's nodes where
# they exist), every program of the build (the tests link to rtid, fake-tool,
# the mocks and themselves), and the node's own rtid paths (present or not).
# `record` runs first in the suite and `check` last (their priorities, and
# neither in parallel with another test); check compares with the record of
# the same run and removes it, so a check run alone skips. (Named on meson
# test's command line, tests run in the order named: name modes-before first.)
# Usage: modes.sh record|check RECORD BUILD_DIR
set -eu
what=$1 record=$2 build=$3

snapshot() {
	for f in /dev/null /dev/zero /dev/full /dev/random /dev/urandom /dev/tty \
		/dev/nvidiactl /dev/nvidia-uvm /dev/nvidia[0-9]*; do
		[ -e "$f" ] && stat -c '%a %u %g %F %n' "$f"
	done
	for f in /run/rtid /run/rtid/rtid.sock /etc/rtid /etc/rtid/shim.conf /var/lib/rtid \
		/var/lib/rtid/attestation.json; do
		if [ -e "$f" ] || [ -L "$f" ]; then stat -c '%a %u %g %F %n' "$f"; else echo "absent $f"; fi
	done
	find "$build" -type f -perm /111 ! -path '*/meson-private/*' ! -path '*.p/*' \
		-exec stat -c '%a %u %g %F %n' {} + | sort
}

case $what in
record)
	snapshot > "$record.tmp"
	mv "$record.tmp" "$record"
	echo "modes: $(wc -l < "$record") files recorded"
	;;
check)
	if [ ! -f "$record" ]; then
		echo "modes: no record of this run (modes-before did not run first)"
		exit 77
	fi
	now=$(mktemp)
	trap 'rm -f "$now"' EXIT
	snapshot > "$now"
	# Programs the suite built or removed after the record are not outside
	# changes; a recorded file that changed, or is gone, is.
	bad=$(awk 'NR == FNR { was[$NF] = $0; next }
		($NF in was) && was[$NF] != $0 { print "was: " was[$NF] "\n now: " $0 }
		{ seen[$NF] = 1 }
		END { for (f in was) if (!(f in seen)) print "gone: " was[f] }' "$record" "$now")
	rm -f "$record"
	if [ -n "$bad" ]; then
		echo "modes: changed during the suite:" >&2
		echo "$bad" >&2
		exit 1
	fi
	echo "modes: $(wc -l < "$now") files as they were"
	;;
*)
	echo "usage: modes.sh record|check RECORD BUILD_DIR" >&2
	exit 2
	;;
esac
