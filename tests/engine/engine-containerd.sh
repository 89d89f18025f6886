# containerd through runc (sourced by engine.sh): a containerd of its own
# (root, state and socket under $T; no CRI plugin) started with the engines'
# PATH, which its runc shim and CRIU inherit; the rootfs folder imported as a
# one-layer image (oci-image.py: no registry), the stand-in's FIFO bound in;
# CRIU's settings named by the org.criu.config annotation, with a log file of
# their own, since ctr keeps no CRIU work directory (containerd 1.6: `ctr
# container checkpoint --task`, `ctr container restore --live`).
command -v containerd > /dev/null && command -v ctr > /dev/null ||
	skip "containerd is not installed (apt-get install containerd)"
# Their temp folders (a checkpoint's images, ctrd-checkpoint*, which a checkpoint
# by ctr 1.6 leaves behind) go under $T, removed with it, not in the node's /tmp.
C="env TMPDIR=$T/ctd/tmp ctr --address $T/ctd/ctd.sock"

engine_start() {
	mkdir -p "$T/ctd/tmp" "$T/work"
	cat > "$T/ctd/config.toml" <<TOML
version = 2
root = "$T/ctd/root"
state = "$T/ctd/state"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "$T/ctd/ctd.sock"
TOML
	{ cat "$T/criu.conf"; printf 'log-file %s/ctd/criu.log\n' "$T"; } > "$T/ctd/criu.conf"
	env -i PATH="$path" TMPDIR="$T/ctd/tmp" containerd --config "$T/ctd/config.toml" > "$T/ctd/containerd.log" 2>&1 &
	ctd=$!
	echo "$ctd" > "$T/ctd/pid" # engine_start runs in a subshell: engine_stop reads it
	# Ready once it answers on its socket (ctr version asks the daemon).
	i=0
	until $C version > /dev/null 2>&1; do
		i=$((i + 1))
		[ "$i" -lt 300 ] && kill -0 "$ctd" 2> /dev/null || return 1
		sleep 0.1 # containerd has no readiness fd to wait on
	done
	python3 "$(dirname "$0")/oci-image.py" "$T/rootfs" "$T/ctd/image.tar" rtid.test/engine:1 &&
		$C image import "$T/ctd/image.tar" > /dev/null &&
		$C run -d --null-io --snapshotter overlayfs --annotation org.criu.config="$T/ctd/criu.conf" \
			--mount "type=bind,src=$T/rootfs/ready,dst=/ready,options=rbind:rw" \
			rtid.test/engine:1 "$cid" /bin/sh -c "exec /bin/task 3>/ready" < /dev/null
}
engine_pid() { $C task ls | awk -v c="$cid" '$1 == c && $3 == "RUNNING" { print $2; f = 1 } END { exit !f }'; }
# Each CRIU run's log moved to its name, where engine.sh reads it.
engine_checkpoint() {
	# It keeps running (no --exit in ctr 1.6's container checkpoint): stopped
	# and removed here, as runc and Podman leave theirs, the checkpoint kept.
	$C container checkpoint --task "$cid" rtid.test/checkpoint:1 &&
		mv "$T/ctd/criu.log" "$T/work/dump.log" &&
		$C task delete -f "$cid" > /dev/null && $C container rm "$cid" || return 1
	# The dump left it running, so the plugin resumed its devices (restore,
	# unlock) after the checkpoint. The mock driver keeps a state per process
	# by its cgroup and pid, which the restored process has again: set to
	# checkpointed, the state the restored process's image holds, as a real
	# driver would find it.
	for f in "$T/state"/*; do
		[ -f "$f" ] && printf '2\n' > "$f"
	done
	true
}
engine_restore() {
	$C container restore --live "$cid" rtid.test/checkpoint:1 < /dev/null &&
		mv "$T/ctd/criu.log" "$T/work/restore.log"
}
engine_log() { echo "$T/work/$1.log"; }
engine_alive() { engine_pid > /dev/null; }
engine_remove() {
	$C task delete -f "$cid" > /dev/null 2>&1
	$C container rm "$cid" 2> /dev/null
	$C image rm rtid.test/engine:1 rtid.test/checkpoint:1 > /dev/null 2>&1
	true
}
# ctr's cgroup: NAMESPACE/ID under each hierarchy (cgroup v1) or the unified one.
engine_cgroups() {
	for d in /sys/fs/cgroup/*/default/"$cid" /sys/fs/cgroup/default/"$cid"; do
		[ -d "$d" ] && echo "$d"
	done
	true
}
# No container left; then containerd itself goes, so that no process of the run stays.
engine_gone() {
	[ -z "$($C container ls -q)" ] || return 1
	engine_stop
}
engine_stop() {
	[ -f "$T/ctd/pid" ] || return 0
	ctd=$(cat "$T/ctd/pid")
	rm "$T/ctd/pid"
	kill "$ctd" || return 1
	# not our child (engine_start's subshell started it): wait for it to go
	i=0
	while kill -0 "$ctd" 2> /dev/null; do
		i=$((i + 1))
		[ "$i" -lt 100 ] || return 1
		sleep 0.1 # no pidfd in sh to wait on
	done
	grep -q "$T/ctd" /proc/self/mountinfo && umount -R "$T/ctd/root" 2> /dev/null
	true
}
