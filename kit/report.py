"""The GPU kit's report: report.json and table.txt from what run.sh collected.

    python3 report.py WORK OUT API_SECONDS VALIDATE_RC CRIU_STATUS CRIU_OK

Exit 0 when every process got one answer from all four ways and it is the
expected kind (a tid for a CUDA process, none for the negative one, either
for a process with NVML alone), the
daemon answered every call itself, each cycle kept its process's data (a
checksum taken, the same after), rtid validate found no mismatch, and CRIU,
when it was tried, dumped and restored; else 1, with the reasons in the
report's "why".
"""
import json
import os
import re
import statistics
import sys

SUM = re.compile(r"^[0-9a-f]+$")


def rows(path, n):
    """Tab-separated lines of at least n fields; none when the file is absent."""
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [l.rstrip("\n").split("\t") for l in f if l.count("\t") >= n - 1]


def by_pid(path):
    """rtid resolve --json: one object per line, by pid."""
    out = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                try:
                    o = json.loads(line)
                except ValueError:
                    continue
                out[o.get("pid")] = o
    return out


def api_answer(o):
    if o is None:
        return "error:no-answer"
    if o.get("error"):
        return "error:" + o["error"]
    return str(o["tid"]) if o.get("tid") else "none"


def scan_answer(o):
    """What the scan alone says: its one match, none, or ambiguous."""
    if o is None:
        return "error:no-answer"
    n = o.get("scan_candidates")
    if o.get("source") == "scan" and o.get("tid"):
        return str(o["tid"])
    if n == 0:
        return "none"
    if n and n > 1:
        return "ambiguous:%d" % n
    return "error:" + str(o.get("error"))


def served_by(work):
    """Who answered the shim's --get-restore-tid per pid: daemon (rtid
    serve), rtid (its own resolver, the daemon silent or failing) or tool
    (the real tool, which logs no pid)."""
    by = {}
    path = os.path.join(work, "shim.log")
    if os.path.exists(path):
        with open(path) as f:
            for l in f:
                m = re.search(r"get-restore-tid --pid (\d+): answered by rtid (serve|\()", l)
                if m:
                    by[m.group(1)] = "daemon" if m.group(2) == "serve" else "rtid"
    return by


def main():
    work, out, api_s, validate_rc, criu, criu_ok = sys.argv[1:7]
    machine = {k: v for k, v in rows(os.path.join(work, "machine.tsv"), 2)}
    procs = rows(os.path.join(work, "procs.tsv"), 4)
    answers = {r[0]: r for r in rows(os.path.join(work, "answers.tsv"), 5)}
    api = by_pid(os.path.join(work, "api.json"))
    scan = by_pid(os.path.join(work, "scan.json"))
    by = served_by(work)
    why = []
    report = {"kit": 1, "machine": machine, "processes": [], "disagreements": []}
    for pid, kind, expect, _ in procs:
        a = answers.get(pid, [pid, "error:not-asked", "0", "error:not-asked", "0"])
        p = {
            "pid": int(pid), "kind": kind, "expect": expect,
            "tool": a[1], "tool_s": float(a[2]), "served": a[3], "served_s": float(a[4]),
            "api": api_answer(api.get(int(pid))), "scan": scan_answer(scan.get(int(pid))),
            "served_by": by.get(pid, "tool"),
        }
        four = {p["tool"], p["served"], p["api"], p["scan"]}
        p["agree"] = len(four) == 1
        right = (expect == "none" and four == {"none"}) or (
            expect == "cuda" and p["agree"] and p["tool"].isdigit()) or (
            expect == "any" and p["agree"] and (p["tool"].isdigit() or p["tool"] == "none"))
        p["verdict"] = "pass" if right else "fail"
        if not p["agree"]:
            report["disagreements"].append(
                {k: p[k] for k in ("pid", "kind", "tool", "served", "api", "scan")})
        if not right:
            why.append("process %s (%s): tool %s, served %s, api %s, scan %s" % (
                pid, kind, p["tool"], p["served"], p["api"], p["scan"]))
        report["processes"].append(p)
    n = len(report["processes"])
    if n < 8:
        why.append("only %d processes started (8 wanted)" % n)
    for f in rows(os.path.join(work, "failures.tsv"), 2):
        why.append("could not start %s: %s" % (f[1], f[2] if len(f) > 2 else ""))
    fallbacks = 0
    if os.path.exists(os.path.join(work, "shim.log")):
        with open(os.path.join(work, "shim.log")) as f:
            # Every call not answered by the daemon: rtid's own resolver (the
            # daemon silent or failing) or the real tool; but -h, which CRIU's
            # plugin asks and the tool answers.
            fallbacks = sum(1 for l in f if "answered by rtid (" in l or
                            (": to the real tool " in l and ": -h: " not in l))
    if fallbacks:
        why.append("the shim ran the real tool %d times (see logs/shim.log, serve.log)" % fallbacks)
    report["shim_fallbacks"] = fallbacks
    report["tool_per_spawn_s"] = statistics.median(
        [p["tool_s"] for p in report["processes"]]) if n else None
    report["served_per_call_s"] = statistics.median(
        [p["served_s"] for p in report["processes"]]) if n else None
    report["api_batch_s"] = float(api_s)
    report["api_per_process_s"] = float(api_s) / n if n else None
    cycle = []
    for pid, states, before, after in rows(os.path.join(work, "cycle.tsv"), 4):
        s = states.split(" ")
        ok = (s == ["running", "rc=0", "locked", "rc=0", "checkpointed", "rc=0", "locked",
                    "rc=0", "running"] and SUM.match(before) is not None and before == after)
        cycle.append({"pid": int(pid), "steps": s, "sum_before": before, "sum_after": after,
                      "verdict": "pass" if ok else "fail"})
        if not ok:
            why.append("cycle of %s: %s, sum %s -> %s" % (pid, states, before, after))
    if len(cycle) < 2:
        why.append("the cycle ran on %d processes (2 wanted)" % len(cycle))
    report["cycle"] = cycle
    report["validate_exit"] = int(validate_rc)
    if int(validate_rc) != 0:
        why.append("rtid validate exited %s (logs/validate.txt says why)" % validate_rc)
    report["criu"] = criu
    report["criu_ran"] = criu_ok != ""
    if criu_ok == "no":
        why.append("CRIU: " + criu)
    report["verdict"] = "pass" if not why else "fail"
    report["why"] = why
    with open(os.path.join(out, "report.json"), "w") as f:
        json.dump(report, f, indent=1)
        f.write("\n")
    lines = ["driver %s (API %s)  gpu %s  kernel %s  sandbox %s" % (
                 machine.get("driver"), machine.get("driver_api_version"), machine.get("gpu"),
                 machine.get("kernel"), machine.get("sandbox")),
             "%-8s %-12s %-6s %-9s %-9s %-7s %-9s %-9s %s" % (
                 "pid", "kind", "expect", "tool", "served", "by", "api", "scan", "verdict")]
    for p in report["processes"]:
        lines.append("%-8d %-12s %-6s %-9s %-9s %-7s %-9s %-9s %s" % (
            p["pid"], p["kind"], p["expect"], p["tool"], p["served"], p["served_by"], p["api"],
            p["scan"], p["verdict"]))
    for c in cycle:
        lines.append("cycle %d: %s; sum %s -> %s: %s" % (
            c["pid"], " ".join(c["steps"]), c["sum_before"], c["sum_after"], c["verdict"]))
    fmt = lambda v: "-" if v is None else "%.4f s" % v
    lines.append("tool per spawn %s, served per call %s, api %s for %d (one attach)" % (
        fmt(report["tool_per_spawn_s"]), fmt(report["served_per_call_s"]),
        fmt(report["api_batch_s"]), n))
    lines.append("criu: " + criu)
    lines.append("verdict: " + report["verdict"] + "".join("\n  " + w for w in why))
    with open(os.path.join(out, "table.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return 0 if not why else 1


sys.exit(main())
