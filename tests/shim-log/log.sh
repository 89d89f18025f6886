#!/bin/sh
# The shim's log says every decision: the call's whole argv and where it
# went, why rtid serve was not asked (no socket, refused), each exit-231
# refusal, a settings file's misspelt name quoted, and the tool's error
# whole (a long one cut at a word's end with "...", never inside a word).
#   log.sh RTID_BIN
set -eu
rtid=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM HUP
fail() { echo "shim-log: FAIL: $*" >&2; [ -f "$T/log" ] && cat "$T/log" >&2; exit 1; }
ln -s "$rtid" "$T/cuda-checkpoint"
unset RTID_REAL_TOOL RTID_CUDA_CHECKPOINT RTID_MODE RTID_BACKEND
export RTID_SHIM_CONF="$T/shim.conf" RTID_SHIM_LOG="$T/log"
printf 'RTID_SOKET=%s/none\nRTID_SOCKET=%s/none\n' "$T" "$T" > "$T/shim.conf"
chmod 0644 "$T/shim.conf"
has() { grep -qF -- "$1" "$T/log" || fail "the log lacks: $1"; }

# An action with no daemon: the reason, then the whole call to the real tool.
RTID_REAL_TOOL=/bin/true "$T/cuda-checkpoint" --action lock --pid $$ --timeout 5000 ||
	fail "the call failed"
has "shim.conf:1: not a setting: 'RTID_SOKET'"
has "lock --pid $$: rtid serve not asked: no socket at $T/none"
has "--action lock --pid $$ --timeout 5000: to the real tool /bin/true"

# A socket nobody listens on: refused, said.
python3 -c 'import socket, sys; s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); s.bind(sys.argv[1])' "$T/stale"
: > "$T/log"
RTID_SOCKET=$T/stale RTID_REAL_TOOL=/bin/true "$T/cuda-checkpoint" --action unlock --pid $$ ||
	fail "the call failed"
has "rtid serve at $T/stale: cannot connect: Connection refused"

# Exit 231: no real tool; the shim called by itself.
rc=0
RTID_REAL_TOOL=$T/missing "$T/cuda-checkpoint" --get-state --pid $$ 2>/dev/null || rc=$?
[ "$rc" = 231 ] || fail "no real tool: exit $rc, not 231"
has "--get-state --pid $$: RTID_REAL_TOOL=$T/missing: no such executable: exit 231"
rc=0
RTID_SHIM_ACTIVE=1 "$T/cuda-checkpoint" --get-state --pid $$ 2>/dev/null || rc=$?
[ "$rc" = 231 ] || fail "recursion: exit $rc, not 231"
has "called by itself (RTID_SHIM_ACTIVE is set"

# The tool's error, whole: rtid's own query fails with it, then the tool answers.
msg='Could not get restore thread ID for process ID 4242: "the driver refused the request of this process"'
printf '#!/bin/sh\necho %s >&2\nexit 2\n' "'$msg'" > "$T/tool"
chmod 0755 "$T/tool"
: > "$T/log"
RTID_REAL_TOOL=$T/tool "$T/cuda-checkpoint" --get-restore-tid --pid $$ 2>/dev/null && fail "the tool's failure passed"
has "cuda-checkpoint exit 2: $msg"
long="$msg, and a great deal more that no excerpt can hold whole without running past its room"
printf '#!/bin/sh\necho %s >&2\nexit 2\n' "'$long'" > "$T/tool"
: > "$T/log"
RTID_REAL_TOOL=$T/tool "$T/cuda-checkpoint" --get-restore-tid --pid $$ 2>/dev/null && fail "the tool's failure passed"
cut=$(sed -n 's/.*cuda-checkpoint exit 2: \(.*\.\.\.\)$/\1/p' "$T/log")
[ -n "$cut" ] || fail "a long error not ended with ..."
case " $long " in *" ${cut%...} "*) ;; *) fail "cut inside a word: $cut" ;; esac
# The log named in the file only, after a mistyped line (as the shipped file
# puts RTID_SOCKET and RTID_REAL_TOOL before it): the fault is said there all
# the same. Before, a fault before RTID_SHIM_LOG was lost.
printf 'RTID_SOKET=%s/none\nRTID_SOCKET=%s/none\nRTID_SHIM_LOG=%s/late.log\n' "$T" "$T" "$T" > "$T/shim.conf"
RTID_SHIM_LOG= RTID_REAL_TOOL=/bin/true env -u RTID_SHIM_LOG "$T/cuda-checkpoint" --action lock --pid $$ ||
	fail "the call failed"
grep -qF "shim.conf:1: not a setting: 'RTID_SOKET'" "$T/late.log" ||
	fail "a fault before RTID_SHIM_LOG is not in its log: $(cat "$T/late.log" 2>&1)"
# More faults than the shim holds: the first 8 said, and how many more.
printf 'A1=1\nA2=1\nA3=1\nA4=1\nA5=1\nA6=1\nA7=1\nA8=1\nA9=1\nA10=1\nRTID_SHIM_LOG=%s/many.log\n' "$T" > "$T/shim.conf"
RTID_REAL_TOOL=/bin/true env -u RTID_SHIM_LOG "$T/cuda-checkpoint" --action lock --pid $$ ||
	fail "the call failed"
grep -qF "shim.conf:8: not a setting: 'A8'" "$T/many.log" && grep -qF "and 2 more faults of the settings file" "$T/many.log" ||
	fail "past 8 faults: $(cat "$T/many.log" 2>&1)"
echo "shim-log: every decision, reason and refusal said; the tool's error whole"
