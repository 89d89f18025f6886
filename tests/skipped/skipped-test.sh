#!/bin/sh
# make check's closing list (scripts/skipped.py): each skipped test with the
# last line it printed, none of the others; nothing at all when none skipped.
set -eu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "skipped test: $*" >&2; cat "$tmp/out" >&2; exit 1; }
cat > "$tmp/log.json" <<'JSON'
{"name": "rtid:criu / criu-driver", "result": "SKIP", "stdout": "criu suite: no criu in /x\n", "stderr": ""}
{"name": "rtid:unit / parse", "result": "OK", "stdout": "all good\n", "stderr": ""}
{"name": "rtid:engine / engine-runc", "result": "SKIP", "stdout": "", "stderr": "first\nrunc is not installed\n\n"}
JSON
python3 "$RTID_SOURCE_ROOT/scripts/skipped.py" "$tmp/log.json" > "$tmp/out"
grep -q "^Skipped (2 of 3), and why:" "$tmp/out" || fail "no count"
grep -q "^  rtid:criu / criu-driver: criu suite: no criu in /x$" "$tmp/out" || fail "criu reason"
grep -q "^  rtid:engine / engine-runc: runc is not installed$" "$tmp/out" || fail "engine reason"
grep -q "parse" "$tmp/out" && fail "a test that ran is listed"
grep -v SKIP "$tmp/log.json" > "$tmp/none.json"
python3 "$RTID_SOURCE_ROOT/scripts/skipped.py" "$tmp/none.json" > "$tmp/out"
[ ! -s "$tmp/out" ] || fail "something listed when nothing was skipped"
! python3 "$RTID_SOURCE_ROOT/scripts/skipped.py" "$tmp/missing.json" > "$tmp/out" 2>&1 ||
	fail "a missing log is not an error"
echo "skipped list: ok"
