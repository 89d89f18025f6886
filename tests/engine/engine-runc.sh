# runc itself (sourced by engine.sh): its state under $T, the bundle's
# config from runc spec with the stand-in as the container's process and
# CRIU's settings named by the org.criu.config annotation, as runc reads it.
R="runc --root $T/runc"

engine_start() {
	mkdir -p "$T/bundle"
	(cd "$T/bundle" && runc spec)
	python3 - "$T/bundle/config.json" "$T/rootfs" "$T/criu.conf" <<'PY'
import json, sys
path, rootfs, conf = sys.argv[1:]
c = json.load(open(path))
c["root"] = {"path": rootfs, "readonly": True}
c["process"]["terminal"] = False
c["process"]["args"] = ["/bin/sh", "-c", "exec /bin/task 3>/ready"]
c.setdefault("annotations", {})["org.criu.config"] = conf
json.dump(c, open(path, "w"))
PY
	env -i PATH="$path" $R run -d --bundle "$T/bundle" "$cid" < /dev/null
}
engine_pid() {
	env -i PATH="$path" $R state "$cid" | python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])'
}
engine_checkpoint() {
	env -i PATH="$path" $R checkpoint --image-path "$T/img" --work-path "$T/work" "$cid"
}
engine_restore() {
	env -i PATH="$path" $R restore -d --image-path "$T/img" --work-path "$T/work" \
		--bundle "$T/bundle" "$cid" < /dev/null
}
engine_log() { echo "$T/work/$1.log"; }
engine_alive() {
	env -i PATH="$path" $R state "$cid" | grep -q '"status": "running"'
}
engine_remove() { env -i PATH="$path" $R delete -f "$cid"; }
engine_cgroups() { ls -d /sys/fs/cgroup/*/"$cid" 2> /dev/null; }
engine_gone() { [ -z "$(env -i PATH="$path" $R list -q)" ]; }
