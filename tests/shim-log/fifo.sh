#!/bin/sh
# The shim's log (RTID_SHIM_LOG) can never hang the call CRIU waits on: a
# FIFO at that path, with no reader or with one, is not written, and the
# call goes on to the real tool at once.
#   fifo.sh RTID_BIN
set -eu
rtid=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
ln -s "$rtid" "$T/cuda-checkpoint"
mkfifo "$T/log"
rc=0
RTID_SHIM_CONF= RTID_SHIM_LOG="$T/log" RTID_REAL_TOOL=/bin/true RTID_SOCKET="$T/none" \
	timeout 30 "$T/cuda-checkpoint" --get-state --pid 1 || rc=$?
[ "$rc" = 0 ] || { echo "shim-log: FAIL: the call with a FIFO as its log: exit $rc" >&2; exit 1; }
echo "shim-log: a FIFO as the shim's log does not hang the call"
