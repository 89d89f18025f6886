#!/bin/sh
# Coverage of src/ from a build with -Db_coverage=true whose tests have run:
# print "lines: X%" and "branches: Y%", write an HTML report, and fail below
# the gate in coverage/gate.
set -eu
build=${1:-build-cov}
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/coverage/gate"
rc="--rc lcov_branch_coverage=1"
lcov -q $rc --capture --directory "$build" \
	--output-file "$build/all.info" 2>/dev/null
lcov -q $rc --extract "$build/all.info" "$top/src/*" --output-file "$build/src.info" 2>/dev/null
summary=$(lcov $rc --summary "$build/src.info" 2>&1)
lpct=$(echo "$summary" | sed -n 's/.*lines\.*: *\([0-9.]*\)%.*/\1/p')
bpct=$(echo "$summary" | sed -n 's/.*branches\.*: *\([0-9.]*\)%.*/\1/p')
genhtml -q $rc --output-directory "$build/coverage-html" "$build/src.info" >/dev/null 2>&1 || true
echo "lines: ${lpct}%"
echo "branches: ${bpct}%"
echo "report: $build/coverage-html/index.html"
# lcov gates the lines itself; the branch figure is compared here.
lcov -q $rc --summary "$build/src.info" --fail-under-lines "$lines" >/dev/null 2>&1 ||
	{ echo "coverage: lines ${lpct}% below the gate of ${lines}%" >&2; exit 1; }
awk -v b="$bpct" -v g="$branches" 'BEGIN { exit !(b + 0 >= g + 0) }' ||
	{ echo "coverage: branches ${bpct}% below the gate of ${branches}%" >&2; exit 1; }
echo "coverage: gate (lines ${lines}%, branches ${branches}%) met"
