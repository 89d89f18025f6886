#!/bin/sh
# Unite every report in the shared place into the attestation, and show it.
# A set union under the attestation's lock: safe to re-run, from a cron or
# from several merge jobs at once; a report merged again adds nothing.
set -eu
att=${RTID_ATTESTATION_OUT:-/shared/rtid/attestation.json}
reports=${RTID_REPORTS:-/shared/rtid/reports}
set -- "$reports"/*.json
if [ ! -e "$1" ]; then
	echo "merge: no reports in $reports yet"
	exit 0
fi
mkdir -p "${att%/*}"
status=0
rtid attest merge ${RTID_ALLOW_UNSAFE:+--allow-unsafe} "$att" "$@" || status=$?
rtid attest show "$att"
exit "$status"
