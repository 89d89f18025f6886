#!/bin/sh
# The units as systemd reads them (systemd-analyze verify, each ExecStart's
# program the build's rtid, man pages not looked up), and the metrics timer's
# pair: a oneshot service that writes node_exporter's textfile collector's
# file whole with rtid serve status --prometheus --output, which, run as its
# ExecStart says, writes a file the collector reads (here with no daemon:
# rtid_up 0, exit 1). Skips (77) without systemd-analyze.
#
#   units-verify.sh RTID_BIN BUILD/systemd SOURCE/systemd
set -eu
rtid=$1 built=$2 src=$3
command -v systemd-analyze > /dev/null ||
	{ echo "units-verify: skipped: no systemd-analyze (apt-get install systemd)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "units-verify: $*" >&2; exit 1; }
prom=/var/lib/prometheus/node-exporter/rtid.prom

for unit in "$built/rtid.service" "$built/rtid-metrics.service" "$src/rtid.socket" \
	"$src/rtid-metrics.timer"; do
	sed "s#^ExecStart=[^ ]*/rtid #ExecStart=$rtid #" "$unit" > "$tmp/${unit##*/}"
done
systemd-analyze verify --man=no "$tmp/rtid.service" "$tmp/rtid.socket" \
	"$tmp/rtid-metrics.service" "$tmp/rtid-metrics.timer" > "$tmp/said" 2>&1 ||
	{ cat "$tmp/said" >&2; fail "systemd-analyze verify refused a unit (above)"; }
[ ! -s "$tmp/said" ] || { cat "$tmp/said" >&2; fail "systemd-analyze verify warned (above)"; }

# The timer starts the service of its own name, at boot and then again and
# again; the service runs once each time and writes the collector's file.
svc=$tmp/rtid-metrics.service timer=$tmp/rtid-metrics.timer
grep -qx 'Type=oneshot' "$svc" || fail "rtid-metrics.service is not a oneshot"
grep -q '^Unit=' "$timer" && fail "the timer names another unit than its own service"
grep -qx 'WantedBy=timers.target' "$timer" || fail "the timer is not installed into timers.target"
grep -q '^OnUnitActiveSec=' "$timer" || fail "the timer does not repeat"
exec_start=$(sed -n 's/^ExecStart=//p' "$svc")
[ "$exec_start" = "$rtid serve status --prometheus --output $prom" ] ||
	fail "rtid-metrics.service runs '$exec_start'"
grep -qx "ReadWritePaths=${prom%/*}" "$svc" || fail "the collector's directory is not writable"

# Its command, run with the file put here: the file whole, typed, rtid_up 0
# for a daemon that is not there, and the exit status that says so.
mkdir "$tmp/tf"
set +e
RTID_SOCKET=$tmp/none $(echo "$exec_start" | sed "s#$prom#$tmp/tf/rtid.prom#") 2> "$tmp/err"
rc=$?
set -e
[ "$rc" = 1 ] || fail "the service's command exited $rc with no daemon, not 1"
grep -qx 'rtid_up 0' "$tmp/tf/rtid.prom" || fail "no rtid_up 0 in the file: $(cat "$tmp/tf/rtid.prom")"
[ "$(ls "$tmp/tf")" = rtid.prom ] || fail "left beside the file: $(ls "$tmp/tf")"
echo "units-verify: rtid.service, rtid.socket, rtid-metrics.service and .timer verified;" \
	"the timer's command writes $prom whole"
