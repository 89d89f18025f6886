#!/bin/sh
# The shim as CRIU runs it, under valgrind: on every path where it answers
# or fails itself (rtid's own answer, none, the real tool missing, the shim
# itself or no program) no block is lost. It is rtid's most run entry point,
# and check-valgrind does not follow it (its tool stand-ins are named
# cuda-checkpoint, as the shim is).
# A path that hands the call to the real tool ends in exec: nothing to lose,
# unless the exec fails.
#
#   shim-leaks.sh   (RTID_BIN, FAKE_TOOL and RTID_SOURCE_ROOT from meson)
set -u
skip() { echo "shim-leaks: skipped: $*"; exit 77; }
fail() { echo "shim-leaks: FAIL: $*" >&2; exit 1; }
[ -z "${RTID_UNDER_SANITIZER:-}" ] || skip "a sanitized rtid cannot run under valgrind"
[ -z "${RTID_UNDER_VALGRIND:-}" ] || skip "already under valgrind"
command -v valgrind > /dev/null || skip "no valgrind (apt-get install valgrind)"
T=$(mktemp -d "${TMPDIR:-/tmp}/rtid-shim-leaks.XXXXXX") || fail "no temporary directory"
trap 'rm -rf "$T"' EXIT
trap 'exit 143' TERM
trap 'exit 129' HUP
ln -s "$RTID_BIN" "$T/cuda-checkpoint"

# One call: the shim under valgrind with an environment of the test's only;
# prints the shim's output, fails on a block lost (exit 66).
call() {
	want_status=$1
	shift
	env -i PATH=/usr/bin:/bin RTID_SHIM_CONF= RTID_SOCKET="$T/no.sock" \
		RTID_SHIM_LOG="$T/shim.log" "$@" \
		valgrind --quiet --leak-check=full --errors-for-leak-kinds=definite,indirect \
		--error-exitcode=66 --trace-children=no --log-file="$T/vg.log" \
		--suppressions="$RTID_SOURCE_ROOT/tests/valgrind.supp" \
		"$T/cuda-checkpoint" --get-restore-tid --pid $$ > "$T/out" 2>&1
	status=$?
	[ "$status" != 66 ] || fail "blocks lost ($*): $(cat "$T/vg.log")"
	[ "$status" = "$want_status" ] || fail "exit $status, not $want_status ($*): $(cat "$T/out")"
}

# rtid's own answer: the driver (the real tool's stand-in) names this
# shell's main thread, a live thread of the process asked about.
call 0 RTID_REAL_TOOL="$FAKE_TOOL" FAKE_STDOUT="$$
"
[ "$(cat "$T/out")" = "$$" ] || fail "rtid's answer was '$(cat "$T/out")', not $$"
grep -q "answered by rtid (tool): tid $$" "$T/shim.log" || fail "not rtid's own answer: $(cat "$T/shim.log")"
# The same in canary mode, an attestation read: the scan runs too.
printf '{"format": 1, "drivers": {"580.159.03": {"agree": 12, "mismatch": 0}}}\n' > "$T/att.json"
call 0 RTID_REAL_TOOL="$FAKE_TOOL" RTID_MODE=canary RTID_ATTESTATION="$T/att.json" \
	RTID_DRIVER_VERSION=580.159.03 FAKE_STDOUT="$$
"
grep -q "tid $$; cross-check" "$T/shim.log" || fail "no cross-check: $(cat "$T/shim.log")"
# No real tool at all: exit 231, said.
call 231 RTID_REAL_TOOL="$T/none"
grep -q "exit 231" "$T/shim.log" || fail "exit 231 not said: $(cat "$T/shim.log")"
# The real tool named is the shim itself: refused, exit 231.
call 231 RTID_REAL_TOOL="$T/cuda-checkpoint"
grep -q "is the shim itself" "$T/shim.log" || fail "the shim as its own tool not said: $(cat "$T/shim.log")"
# A real tool that is no program (no ELF, no #!): rtid's query fails, and so
# does the exec of the fallback; the shim goes on after it, to exit 231.
printf 'not a program\n' > "$T/not-a-program"
chmod 755 "$T/not-a-program"
call 231 RTID_REAL_TOOL="$T/not-a-program"
grep -q "cannot run $T/not-a-program: Exec format error: exit 231" "$T/shim.log" ||
	fail "the failed exec not said: $(cat "$T/shim.log")"
echo "shim-leaks: no block lost on rtid's answer, a canary, no tool, the shim as its tool and a failed exec"
