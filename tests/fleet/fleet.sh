#!/bin/sh
# doc/fleet.md's scripts, run as the doc runs them, with stand-ins for the
# cluster: srun and sbatch (tests/fleet/bin), nodes as pid, mount and UTS
# namespaces each with its own /proc and hostname, real processes with a
# thread named like the driver's restore thread as the GPU processes, the mock
# libcuda as each node's driver, and a temp dir as the shared storage.
# Usage: fleet.sh SOURCE_DIR BUILD_DIR
set -eu
src=$1 build=$2
here="$src/tests/fleet" doc="$src/doc/fleet"
fail() { echo "fleet: FAIL: $*" >&2; exit 1; }
skip() {
	echo "fleet: skipped: $*"
	exit 77
}
[ "$(id -u)" = 0 ] || skip "needs root for pid, mount and UTS namespaces (the stand-in nodes)"
command -v unshare >/dev/null && command -v nsenter >/dev/null || skip "no unshare/nsenter"
unshare --pid --fork --mount-proc --uts true 2>/dev/null ||
	skip "cannot make pid, mount and UTS namespaces here"

work=$(mktemp -d)
unshares= inits=
cleanup() {
	# A namespace's init takes only SIGKILL from outside; its end ends the
	# node's every process, and then unshare.
	for p in $inits; do kill -KILL "$p" 2>/dev/null || true; done
	for p in $unshares; do wait "$p" 2>/dev/null || true; done
	[ -n "${FLEET_KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
export FLEET="$work/fleet" FLEET_TASK="$build/tests/criu/criu-task"
export PATH="$here/bin:$build/src:$PATH"
export RTID_LIBCUDA="$build/mocks/libmockcuda.so" RTID_DRIVER_VERSION=580.65.06
export RTID_FLEET="$doc" RTID_VALIDATE_AFTER=0
unset RTID_ATTESTATION RTID_PROC RTID_CUDA_CHECKPOINT RTID_MODE
shared="$work/shared" # mode 0700: only root could have written what is in it
mkdir -p "$FLEET/jobs" "$shared/rtid/reports"
export RTID_REPORTS="$shared/rtid/reports" RTID_ATTESTATION_OUT="$shared/rtid/attestation.json"
att=$RTID_ATTESTATION_OUT V=$RTID_DRIVER_VERSION

# A node: its own pid numbers (from BASE on, so no two nodes share a pid),
# /proc, hostname and machine id; its init idles until the node is torn down.
node() {
	d="$FLEET/nodes/$1"
	mkdir -p "$d"
	mkfifo "$d/ready" "$d/up" "$d/done"
	printf '%032d\n' "$2" > "$d/machine-id" # and its own machine id, when there is one
	unshare --pid --fork --mount-proc --uts --kill-child sh -c \
		'hostname "$1" && echo "$2" > /proc/sys/kernel/ns_last_pid &&
		{ [ ! -e /etc/machine-id ] || mount --bind "$4" /etc/machine-id; } &&
		echo > "$3" && exec sleep 86400' \
		sh "$1" "$2" "$d/ready" "$d/machine-id" </dev/null >/dev/null 2>&1 &
	unshares="$unshares $!"
	read -r _ < "$d/ready"
	init=$(cat "/proc/$!/task/$!/children")
	[ -n "$init" ] || fail "node $1 has no init"
	inits="$inits $init"
	echo $init > "$d/init"
}
node n1 1000
node n2 2000
node n3 3000

# One row of 'rtid attest show': FIELD is the column (2 agree, 5 reports,
# 6 hosts, 7 revoked, 8 attested).
col() { rtid attest show "$att" | awk -v v="$V" -v c="$1" '$1 == v { print $c }'; }
expect() { # WHAT FIELD VALUE
	got=$(col "$2")
	[ "$got" = "$3" ] || { rtid attest show "$att" >&2; fail "$1: $got, expected $3"; }
}

echo "== Slurm: validation as a step of the workload's own job, merge after it"
export FLEET_NODES="n1 n2"
sbatch "$doc/job.sbatch" "$here/gpu-app.sh" 6 > "$work/out" 2>&1 || { cat "$work/out"; fail "sbatch"; }
cat "$work/out"
grep -q '^job 101: exit 0$' "$FLEET/jobs/log" || fail "the job failed: $(cat "$FLEET/jobs/log")"
grep -q '^job 102: exit 0$' "$FLEET/jobs/log" || fail "no merge job after the job"
for n in n1 n2; do
	r=$(ls "$RTID_REPORTS" | grep "^101\.[0-9]*-$n\.json\$") || fail "no report of $n: $(ls "$RTID_REPORTS")"
	grep -q "\"host\": \"$n\"" "$RTID_REPORTS/$r" || fail "report of $n names another host"
done
expect "distinct processes of 2 nodes x 6" 2 12
expect "hosts" 6 2
expect "attested with 12 agreements" 8 yes

echo "== Slurm: a step attached to a running job, twice; merge from a cron"
FLEET_ROUNDS=2 SLURM_JOB_ID=200 srun --ntasks-per-node=1 "$here/gpu-app.sh" 4 &
workload=$!
for round in 1 2; do
	srun --jobid=200 --overlap --nodes=2 --ntasks-per-node=1 "$doc/validate-step.sh" ||
		fail "attached validation step $round"
done
wait "$workload" || fail "the running job's workload"
[ "$(ls "$RTID_REPORTS" | grep -c '^200\..*\.json$')" = 4 ] || fail "4 reports expected: $(ls "$RTID_REPORTS")"
"$doc/merge.sh" > "$work/out" || fail "merge.sh: $(cat "$work/out")"
expect "12 + 8 processes, each validated twice, counted once" 2 20
expect "reports" 5 6
cp "$att" "$work/before"
"$doc/merge.sh" > /dev/null || fail "merge.sh again"
"$doc/merge.sh" > /dev/null || fail "merge.sh a third time"
cmp "$work/before" "$att" || fail "merging the same reports again changed the attestation"

echo "== Slurm: a mismatch on one node revokes the version"
export FLEET_NODES="n3"
sbatch "$doc/job.sbatch" "$here/gpu-app.sh" 3 mismatch > "$work/out" 2>&1 ||
	{ cat "$work/out"; fail "sbatch"; }
grep -q 'validation failed on some node' "$work/out" || fail "the failed step went unsaid"
id=$(tail -n 1 "$work/out" | awk '{ print $4 }') # the merge job is the next id
grep -q "^job $id: exit 0\$" "$FLEET/jobs/log" || fail "the workload's job must not fail: $(cat "$FLEET/jobs/log")"
grep -q "^job $((id + 1)): exit 0\$" "$FLEET/jobs/log" || fail "no merge job after the job"
expect "revoked" 7 yes
expect "not attested" 8 no
rtid attest show "$att" | grep -q "revoked: .*n3" || fail "the revocation does not name node n3"
rtid attest lift "$att" "$V" "wrong pid in report of n3, see ticket 4711" || fail "lift"
expect "lifted" 7 no
cp "$att" "$work/before"
"$doc/merge.sh" > /dev/null || fail "merge.sh after the lift"
cmp "$work/before" "$att" || fail "merging known reports again undid the lift"

echo "== Slurm: a report others could have written is skipped"
cp "$RTID_REPORTS/$r" "$RTID_REPORTS/999.0-nobody.json"
chown 65534 "$RTID_REPORTS/999.0-nobody.json"
if "$doc/merge.sh" > "$work/out" 2>&1; then fail "merge.sh took a report of another user"; fi
grep -q "skipping .*999.0-nobody.json: not trusted" "$work/out" || fail "no warning: $(cat "$work/out")"
cmp "$work/before" "$att" || fail "a skipped report changed the attestation"
RTID_ALLOW_UNSAFE=1 "$doc/merge.sh" > /dev/null || fail "RTID_ALLOW_UNSAFE=1 merge.sh"
rm "$RTID_REPORTS/999.0-nobody.json"

echo "== Kubernetes: the DaemonSet's loop on a node, the CronJob's merge"
export FLEET_NODES="n1" NODE=n1 RTID_REPORTS="$shared/k8s"
export RTID_ATTESTATION_OUT="$shared/k8s/attestation/attestation.json"
att=$RTID_ATTESTATION_OUT
mkdir -p "$RTID_REPORTS"
SLURM_JOB_ID=300 srun --ntasks-per-node=1 "$here/gpu-app.sh" 3 &
workload=$!
RTID_VALIDATE_ROUNDS=2 RTID_VALIDATE_INTERVAL=0 srun --jobid=300 --overlap --ntasks-per-node=1 \
	sh "$doc/validate-loop.sh" > "$work/out" 2>&1 || fail "validate-loop.sh: $(cat "$work/out")"
wait "$workload" || fail "the pod's workload"
[ "$(ls "$RTID_REPORTS" | grep -c '^n1-.*\.json$')" = 2 ] || fail "2 reports expected: $(ls "$RTID_REPORTS")"
"$doc/merge.sh" > /dev/null || fail "the CronJob's merge.sh"
expect "3 processes, validated twice" 2 3
expect "not attested yet" 8 no
cp "$att" "$work/before"
"$doc/merge.sh" > /dev/null && cmp "$work/before" "$att" || fail "the CronJob's merge again changed it"
rtid attest show "$att" | grep -q "missing: 7 more" || fail "show does not say what is missing"

echo "== the doc's first commands, on one node, with its paths in the temp dir"
export FLEET_NODES="n2"
mkdir -p "$work/var/lib/rtid" "$work/top/rtid/reports"
SLURM_JOB_ID=400 srun --ntasks-per-node=1 "$here/gpu-app.sh" 2 &
workload=$!
# The block after the first paragraph; /shared and /var/lib/rtid moved.
awk '/^    rtid validate --all/ { on = 1 } on && !/^    / { exit } on { sub(/^    /, ""); print }' \
	"$src/doc/fleet.md" | sed -e "s|/var/lib/rtid|$work/var/lib/rtid|g" -e "s|/shared|$work/top|g" \
	> "$work/top.sh"
[ "$(wc -l < "$work/top.sh")" = 3 ] || fail "the doc's first block: $(cat "$work/top.sh")"
RTID_ATTESTATION="$work/var/lib/rtid/attestation.json" srun --jobid=400 --overlap \
	--ntasks-per-node=1 sh -e "$work/top.sh" > "$work/out" 2>&1 ||
	fail "the doc's first commands: $(cat "$work/out")"
wait "$workload" || fail "the node's workload"
awk -v v="$V" '$1 == v && NF == 8 && $2 == 2 && $5 == 1 && $6 == 1 && $7 == "no" { ok = 1 }
	END { exit !ok }' "$work/out" ||
	{ cat "$work/out"; fail "the doc's first commands: 2 agreements of 1 report expected"; }
[ -s "$work/var/lib/rtid/attestation.json" ] || fail "validate did not record in the attestation"

echo "== the doc quotes these files verbatim, and its YAML is what it says"
python3 "$here/doc-check.py" "$src/doc/fleet.md" "$doc" || fail "doc/fleet.md and doc/fleet/ differ"
echo "fleet: ok"
