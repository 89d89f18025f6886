#!/bin/sh
# The workload on one stand-in node: NPROCS real processes with a thread named
# like the driver's restore thread (criu-task), and the node's driver (the
# case file the mock libcuda reads) naming that thread, or with "mismatch"
# another thread of the first process. Serves FLEET_ROUNDS validations (up,
# then done, on the node's FIFOs), then ends.
# Usage: gpu-app.sh NPROCS [mismatch]
set -eu
n=$1 bad=${2:-}
d=$FLEET_NODE_DIR
tasks=
{
	echo "title the GPU processes of $(hostname)"
	echo "proves the validation step sees the workload's own processes"
} > "$d/case.new"
i=0
while [ "$i" -lt "$n" ]; do
	i=$((i + 1))
	# fd 3 closes once the task is set up: the substitution returns then.
	line=$("$FLEET_TASK" 3>&1 >/dev/null 2>&1 &)
	set -- $line
	pid=$1 tid=$2
	shift 2 # the line: PID RESTORE_TID and every TID
	for t in "$@"; do
		[ "$t" = "$tid" ] && comm=cuda00001400006 || comm=criu-task
		echo "task $pid $t $comm" >> "$d/case.new"
	done
	[ -n "$bad" ] && [ "$i" = 1 ] && tid=$pid # the driver names another thread
	echo "answer $pid tid $tid" >> "$d/case.new"
	echo "expect driver $pid tid=$tid" >> "$d/case.new"
	tasks="$tasks $pid"
done
mv "$d/case.new" "$d/case"
r=0
while [ "$r" -lt "${FLEET_ROUNDS:-1}" ]; do
	r=$((r + 1))
	echo up > "$d/up"
	read -r _ < "$d/done"
done
kill $tasks
