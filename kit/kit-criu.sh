# The GPU kit's CRIU part (sourced by run.sh): when the kit carries CRIU and
# it can run here, one full dump and restore of a CUDA process by CRIU with
# its CUDA plugin, which calls cuda-checkpoint: the shim, answered by the
# kit's rtid serve. Sets criu_status (a sentence the report keeps) and
# criu_ok (yes, no, or "" when not tried). Bash.

criu_try() {
	local c=$kit/criu/criu need have img hold f pid before after state rpid
	criu_ok=""
	if [ -n "$mock" ] && [ -z "${RTID_KIT_CRIU:-}" ]; then
		criu_status="not run: mock mode"
		return
	fi
	if [ ! -x "$c" ]; then
		criu_status="not run: the kit carries no CRIU"
		return
	fi
	need=$(sed -n 's/^criu needs: GLIBC_\([0-9.]*\).*/\1/p' "$kit/MANIFEST" 2> /dev/null)
	have=$(getconf GNU_LIBC_VERSION 2> /dev/null | awk '{ print $2 }')
	if [ -n "$need" ] && [ -n "$have" ] && version_lt "$have" "$need"; then
		criu_status="not run: the kit's CRIU needs glibc $need, this machine has $have"
		return
	fi
	if [ "$(id -u)" != 0 ]; then
		criu_status="not run: CRIU needs root"
		return
	fi
	# The plugin stays off without /proc/driver/nvidia/gpus; against the
	# mocks CRIU's own fault switch turns it on (what its CI does).
	[ -n "$mock" ] && export CRIU_FAULT=138
	if ! LD_LIBRARY_PATH=$kit/criu/lib bounded 60 "$c" check > "$work/criu-check.txt" 2>&1; then
		criu_status="not run: criu check failed: $(grep -v '^$' "$work/criu-check.txt" | tail -1 | head -c 200)"
		return
	fi
	criu_ok=no
	if [ -n "$mock" ]; then
		hold=("$kit/bin/kit-hold" --keep --threads 2 --name cuda0000140000d)
	elif [ -x "$kit/.build/gpu-hold" ]; then
		hold=("$kit/.build/gpu-hold" --keep --threads 2)
	else
		criu_status="not run: no CUDA C holder (nvcc missing or failed)"
		criu_ok=""
		return
	fi
	# A session of its own, as CRIU wants a process it restores elsewhere.
	if ! start criu-target cuda setsid "${hold[@]}"; then
		criu_status="failed: the holder for CRIU did not start"
		return
	fi
	pid=$(tail -1 "$work/procs.tsv" | cut -f1)
	f=$(tail -1 "$work/procs.tsv" | cut -f4)
	pids+=("$pid")
	# Not one of the processes asked four ways: the report's process table
	# is for those.
	sed -i "/^$pid\t/d" "$work/procs.tsv"
	before=$(checksum "$pid" "$f")
	img=$work/img
	mkdir -p "$img"
	# CRIU finds cuda-checkpoint on its PATH: the shim first, as on a node.
	if ! PATH=$work/shim:$PATH LD_LIBRARY_PATH=$kit/criu/lib RTID_SHIM_CONF= RTID_SOCKET=$sock \
		RTID_REAL_TOOL=$tool RTID_SHIM_LOG=$work/shim.log \
		bounded 120 "$c" dump -t "$pid" -D "$img" --shell-job -L "$kit/criu" -v4 -o dump.log \
		> "$work/criu-dump.txt" 2>&1; then
		criu_status="failed: criu dump: $(grep -i error "$img/dump.log" 2> /dev/null | tail -1 | head -c 200)"
		return
	fi
	# The dumped process is killed: its pid must be free again for the
	# restore (reaped once it has ended; not waited for past 30 s).
	for _ in $(seq 300); do
		ended "$pid" && break
		sleep 0.1
	done
	ended "$pid" && wait "$pid" 2> /dev/null
	if ! PATH=$work/shim:$PATH LD_LIBRARY_PATH=$kit/criu/lib RTID_SHIM_CONF= RTID_SOCKET=$sock \
		RTID_REAL_TOOL=$tool RTID_SHIM_LOG=$work/shim.log \
		bounded 120 "$c" restore -D "$img" --shell-job -L "$kit/criu" -v4 -o restore.log -d \
		--pidfile "$img/restored.pid" > "$work/criu-restore.txt" 2>&1; then
		criu_status="failed: criu restore: $(grep -i error "$img/restore.log" 2> /dev/null | tail -1 | head -c 200)"
		return
	fi
	rpid=$(cat "$img/restored.pid" 2> /dev/null)
	after=$(checksum "$pid" "$f")
	state=$(RTID_SHIM_CONF= RTID_SOCKET=$sock RTID_REAL_TOOL=$tool RTID_SHIM_LOG=$work/shim.log \
		bounded 30 "$work/shim/cuda-checkpoint" --get-state --pid "$pid" 2>&1)
	printf '%s\t%s\t%s\t%s\n' "$pid" "$before" "$after" "$state" > "$work/criu.tsv"
	if [ "$rpid" = "$pid" ] && [ -n "$before" ] && [ "$before" != failed ] &&
		[ "$before" = "$after" ] && [ "$state" = running ]; then
		criu_ok=yes
		criu_status="dump and restore passed: pid $pid, sum $before kept, state running after"
	else
		criu_status="failed: restored pid ${rpid:-none} of $pid, sum ${before:-none} -> ${after:-none}, state ${state:-none}"
	fi
}
