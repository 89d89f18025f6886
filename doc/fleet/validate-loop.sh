#!/bin/sh
# The DaemonSet's container: validate the node's GPU processes, ship the
# report to the shared volume, wait, again. A DaemonSet runs no CronJob, so
# the schedule is this loop; RTID_VALIDATE_ROUNDS=N stops after N rounds
# (0, the default: never).
set -eu
reports=${RTID_REPORTS:-/reports}
interval=${RTID_VALIDATE_INTERVAL:-3600}
rounds=${RTID_VALIDATE_ROUNDS:-0}
round=0
while :; do
	round=$((round + 1))
	out="$reports/${NODE:?NODE is not set}-$(date -u +%Y%m%dT%H%M%SZ)-$$-$round.json"
	# A mismatch (exit 1) is in the report; the loop goes on.
	rtid validate --all --backend api --no-attest --report "$out" ||
		echo "rtid: validate exited $? on $NODE (report: $out)"
	[ "$rounds" -gt 0 ] && [ "$round" -ge "$rounds" ] && exit 0
	sleep "$interval"
done
