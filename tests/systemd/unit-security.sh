#!/bin/sh
# The hardened unit: systemd's own rating of rtid.service is 5.0 or lower
# (systemd-analyze security --offline, --threshold=50), and every hardening
# setting is explained (each paragraph of [Service] after the first begins
# with a comment). Skips (77) without a systemd-analyze that rates offline.
#
#   unit-security.sh BUILD/systemd/rtid.service
set -eu
unit=$1
command -v systemd-analyze > /dev/null ||
	{ echo "unit-security: skipped: no systemd-analyze (apt-get install systemd)"; exit 77; }
systemd-analyze security --help 2>/dev/null | grep -q -- --offline ||
	{ echo "unit-security: skipped: systemd-analyze cannot rate a unit offline (systemd < 250)"; exit 77; }
out=$(systemd-analyze security --offline=true "$unit" 2>&1) || true
score=$(printf '%s\n' "$out" | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
[ -n "$score" ] || { echo "unit-security: no rating:" >&2; printf '%s\n' "$out" >&2; exit 1; }
if ! systemd-analyze security --offline=true --threshold=50 "$unit" > /dev/null 2>&1; then
	echo "unit-security: ${unit##*/} is rated $score, above 5.0:" >&2
	printf '%s\n' "$out" | grep '✗' >&2
	exit 1
fi
# Every paragraph of [Service] but the first (what to run) starts with a comment.
awk '
/^\[/ { in_service = ($0 == "[Service]"); para = 0; next }
!in_service { next }
/^$/ { para++; first = 1; next }
para > 0 && first { first = 0; if ($0 !~ /^#/) { print "unexplained: " $0; bad = 1 } }
END { exit bad }
' "$unit" || { echo "unit-security: a hardening setting without its reason (above)" >&2; exit 1; }
echo "unit-security: ${unit##*/} rated $score (at most 5.0), every setting explained"
