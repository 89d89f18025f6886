# Podman through runc (sourced by engine.sh): its storage, run state and
# events under $T, no network, the rootfs folder as the container's root (no
# registry), CRIU's settings named by the org.criu.config annotation, its
# logs kept (--keep) for the assertions. Podman gives its runtime PATH and
# XDG_RUNTIME_DIR only, so the shim has nothing but its file to go by.
P="podman --root $T/storage --runroot $T/prun --runtime runc --cgroup-manager cgroupfs
	--events-backend file --tmpdir $T/ptmp"

engine_start() {
	env -i PATH="$path" HOME="$T" $P run -d --name "$cid" --network none \
		--annotation org.criu.config="$T/criu.conf" --ulimit nofile=1024:1024 \
		--ulimit nproc=4096:4096 --rootfs "$T/rootfs" \
		/bin/sh -c "exec /bin/task 3>/ready" < /dev/null
}
engine_pid() { env -i PATH="$path" HOME="$T" $P inspect -f '{{.State.Pid}}' "$cid"; }
engine_checkpoint() { env -i PATH="$path" HOME="$T" $P container checkpoint --keep "$cid"; }
engine_restore() { env -i PATH="$path" HOME="$T" $P container restore --keep "$cid" < /dev/null; }
engine_log() {
	echo "$T/storage/overlay-containers/$(env -i PATH="$path" HOME="$T" $P inspect -f '{{.Id}}' "$cid" 2>/dev/null)/userdata/$1.log"
}
engine_alive() { [ "$(env -i PATH="$path" HOME="$T" $P inspect -f '{{.State.Status}}' "$cid")" = running ]; }
engine_remove() { env -i PATH="$path" HOME="$T" $P rm -f -t 0 "$cid"; }
engine_cgroups() {
	id=$(env -i PATH="$path" HOME="$T" $P inspect -f '{{.Id}}' "$cid") &&
		ls -d /sys/fs/cgroup/*/libpod_parent/libpod-"$id" 2> /dev/null
}
engine_gone() { [ -z "$(env -i PATH="$path" HOME="$T" $P ps -aq)" ]; }
