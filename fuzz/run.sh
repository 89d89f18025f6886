#!/bin/sh
# Run every harness for SECONDS seconds from the seed corpus (fuzz/corpus/T),
# keeping new inputs in BUILD/corpus/T. Fails on the first crash or finding.
set -u
build=${1:-build-fuzz}
seconds=${2:-20}
for t in tid version match casefile attest stat serve; do
	mkdir -p "$build/corpus/$t"
	if ! "$build/fuzz/fuzz-$t" -max_total_time="$seconds" -max_len=4096 \
		"$build/corpus/$t" "fuzz/corpus/$t" > "$build/fuzz-$t.log" 2>&1; then
		tail -40 "$build/fuzz-$t.log"
		echo "fuzz-$t: FAILED (log: $build/fuzz-$t.log)"
		exit 1
	fi
	echo "fuzz-$t: $(grep -o 'Done [0-9]* runs in [0-9]* second(s)' "$build/fuzz-$t.log"), no findings"
done
