#!/bin/sh
# The GPU kit where there is no GPU: built by make gpu-kit's target, unpacked
# in a scratch directory and run as a new user runs it (one command), against
# the mocks: a driver version file, the mock libcuda and tool standing in for
# a driver over real processes (RTID_MOCK_BY_NAME: kit-hold processes with a
# thread named as the driver names its restore thread). The report must say
# what a user relies on; a tool that lies must fail the run. As root, with
# the kit carrying CRIU, CRIU dumps and restores a holder through the shim
# and the kit's daemon (RTID_REQUIRE_CRIU=1: CRIU must be in the kit).
#
#   kit-test.sh KIT.tar.gz
set -eu
kit_tar=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
command -v python3 > /dev/null || { echo "kit-test: no python3 (the kit's report needs it)"; exit 77; }
tar -C "$tmp" -xzf "$kit_tar"
k=$tmp/rtid-gpu-kit
criu=""
if [ -n "${RTID_UNDER_SANITIZER:-}" ]; then
	: # sanitized holders: CRIU fails to restore them (TSan's shadow mappings), as the CRIU suite is not run there
elif [ "$(id -u)" = 0 ] && [ -x "$k/criu/criu" ]; then
	criu=1
elif [ "${RTID_REQUIRE_CRIU:-}" = 1 ]; then
	echo "kit-test: RTID_REQUIRE_CRIU=1 but the kit carries no CRIU or this is not root" >&2
	exit 1
fi
fail() { echo "kit-test: $*" >&2; [ -f "$tmp/run.log" ] && cat "$tmp/run.log" >&2; exit 1; }

# No driver: 77 and the reason, nothing else.
set +e
RTID_KIT_VERSION_FILE=$tmp/nothing "$k/run.sh" > "$tmp/run.log" 2>&1
rc=$?
set -e
[ "$rc" = 77 ] || fail "without a driver the kit exited $rc, not 77"
grep -q "no NVIDIA driver here" "$tmp/run.log" || fail "no reason given without a driver"

# The checksum the holders share sees every change (gpu-hold's, on the device,
# is the same function).
"$k/bin/kit-hold" --selftest > /dev/null || fail "the holders' checksum misses changes"

# The open kernel module's line (its "x86_64" comes before the version).
printf 'NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.03  Release Build  (dvs-builder@U16-I3-B03-4-3)  Thu Jan  1 2026\n' > "$tmp/version"
printf 'title kit\nproves kit\ndriver 580.159.03\nbackend api\ntask 1 1 init\nanswer 1 none\nexpect driver 1 tid=none\n' > "$tmp/c.case"
mkdir "$tmp/state" "$tmp/t"
mock() { # OUT, tool [VAR=VALUE...]: the kit run against the mocks; its exit status
	local o=$1 t=$2
	shift 2
	set +e
	env "$@" TMPDIR="$tmp/t" RTID_KIT_MOCK=1 RTID_KIT_CRIU=$criu RTID_MOCK_BY_NAME=1 RTID_CASE="$tmp/c.case" RTID_MOCK_STATE="$tmp/state" \
		RTID_KIT_VERSION_FILE="$tmp/version" RTID_KIT_TOOL="$t" RTID_KIT_LIBCUDA="$MOCK_LIBCUDA" \
		OUT="$o" "$k/run.sh" > "$tmp/run.log" 2>&1
	echo $?
	set -e
}

rc=$(mock "$tmp/out" "$MOCK_TOOL")
[ "$rc" = 0 ] || fail "the kit against the mocks exited $rc"
python3 - "$tmp/out" "$criu" <<'PY' || fail "the report is not what a user relies on"
import json, os, re, sys
out, criu = sys.argv[1], sys.argv[2]
r = json.load(open(os.path.join(out, "report.json")))
assert r["verdict"] == "pass" and r["why"] == [], r["why"]
m = r["machine"]
assert m["driver"] == "580.159.03", m
# A sanitized build's mock libcuda cannot be loaded by python (its runtime
# must come first): there the record says so instead.
if os.environ.get("RTID_UNDER_SANITIZER"):
    assert m["driver_api_version"].startswith("error: cannot load"), m
else:
    assert m["driver_api_version"] == "13000", m
assert m["sandbox"] and m["glibc"].startswith("glibc"), m
p = r["processes"]
assert len(p) >= 8, len(p)
for x in p:
    assert x["agree"] and x["served_by"] == "daemon", x
    if x["expect"] == "cuda":
        assert x["tool"].isdigit() and x["tool"] != str(x["pid"]), x
    elif x["expect"] == "none":
        assert x["tool"] == "none", x
# Either answer is right where none is expected of the driver (NVML alone),
# the same four ways: here a tid.
assert [x["tool"].isdigit() and x["verdict"] == "pass" for x in p if x["expect"] == "any"] == [True], p
assert {x["kind"] for x in p} >= {"plain", "threads", "churn", "no-context", "nvml-like"}
assert r["disagreements"] == [] and r["shim_fallbacks"] == 0
assert len(r["cycle"]) == 2
for c in r["cycle"]:
    assert c["verdict"] == "pass", c
    assert c["steps"] == ["running", "rc=0", "locked", "rc=0", "checkpointed", "rc=0", "locked",
                          "rc=0", "running"], c
    assert re.match("^[0-9a-f]+$", c["sum_before"]) and c["sum_before"] == c["sum_after"], c
assert r["tool_per_spawn_s"] > 0 and r["served_per_call_s"] > 0 and r["api_batch_s"] > 0
assert r["validate_exit"] == 0
if criu:
    assert r["criu_ran"] and r["criu"].startswith("dump and restore passed"), r["criu"]
else:
    assert r["criu"] == "not run: mock mode" and not r["criu_ran"], r["criu"]
# The run's logs are kept beside the report.
logs = os.listdir(os.path.join(out, "logs"))
assert "serve.log" in logs and "validate.txt" in logs, logs
a = json.load(open(os.path.join(out, "attestation.json")))
assert "580.159.03" in json.dumps(a)
assert "verdict: pass" in open(os.path.join(out, "table.txt")).read()
PY
# No holder, daemon or worker left behind, nor the kit's work folder.
ps -eo pid,args | grep "$k/" | grep -v grep && fail "processes of the kit are left"
[ -z "$(ls -A "$tmp/t")" ] || fail "the kit left its work folder: $(ls "$tmp/t")"
if [ -n "$criu" ]; then
	grep -q "answered by rtid serve" "$tmp/out/logs/shim.log" || fail "CRIU's calls were not the daemon's"
	grep "to the real tool" "$tmp/out/logs/shim.log" | grep -qv ": -h: " && fail "the shim ran the real tool under CRIU (but for -h)"
fi

# A tool that answers a wrong tid: the run fails and names the process.
printf '#!/bin/sh\necho 1\n' > "$tmp/liar"
chmod 755 "$tmp/liar"
rc=$(mock "$tmp/out2" "$tmp/liar")
[ "$rc" = 1 ] || fail "a lying tool did not fail the kit (exit $rc)"
python3 - "$tmp/out2" <<'PY' || fail "the lie is not in the report"
import json, os, sys
r = json.load(open(os.path.join(sys.argv[1], "report.json")))
assert r["verdict"] == "fail" and r["disagreements"], r
assert any(d["tool"] == "1" for d in r["disagreements"])
PY
# A daemon that answers too late for the shim (it waits 1 us here): every
# such call is rtid's own resolver's or the tool's, and the run must fail on
# it, though the four answers still agree.
rc=$(mock "$tmp/out3" "$MOCK_TOOL" RTID_SERVICE_TIMEOUT=0.000001)
[ "$rc" = 1 ] || fail "calls the daemon did not answer did not fail the kit (exit $rc)"
python3 - "$tmp/out3" <<'PY' || fail "the calls the daemon did not answer are not in the report"
import json, os, sys
r = json.load(open(os.path.join(sys.argv[1], "report.json")))
assert all(p["served_by"] != "daemon" for p in r["processes"]), r["processes"]
assert r["shim_fallbacks"] >= 8 and any("the shim ran the real tool" in w for w in r["why"]), r
PY
echo "kit-test: the kit ran against the mocks and its report is right"
