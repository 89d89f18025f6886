#!/usr/bin/env python3
"""rtid serve status against a scripted daemon: every kind of stat message
(counters, the driver, requests by operation and outcome, latency
percentiles) in words, as JSON and for Prometheus, and what a daemon may
send that is odd (a number that is not one, a short message, an unknown
kind) shown as it is or left out, never a crash; a message that is no stat
fails the command. Words label every number (a latency's sum and count, each
percentile) and name the daemon's version ("-" for a daemon that does not
say it). The series a daemon lists (ops, outcomes, reasons) are written at 0
for Prometheus; its latency is a histogram from its bounds and cumulative
counts (+Inf only from a daemon without them, or with counts that are
none). rtid serve --version is rtid --version.

    status-test.py RTID_BIN"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading

RTID = sys.argv[1]
STATS = ["stat uptime_s 12.5", "stat driver 580.95.05", "stat attaches 1",
         "stat worker_failures 0", "stat requests lock done 3", "stat requests lock x y z",
         "stat duration_seconds lock 1 x",
         "stat requests unlock not-served 2", "stat requests get-state error 4",
         "stat errors get-state worker-failed 3", "stat errors get-state timeout 1",
         "stat requests checkpoint error 1", "stat duration_seconds lock 0.004 2",
         "stat latency_ms get-restore-tid 0.4 0.9 1.5", "stat latency_ms lock 1 n/a 3",
         "stat lonely", "stat odd thing here", "stat busy 2.5e",
         # Out of range, a count that is none, a label to escape, a name the
         # client gives itself, more words than any stat has, a duration
         # whose sum is none (before the good one).
         "stat huge 1e999", "stat errors lock timeout many", 'stat requests lo"c\\k done 5',
         "stat up 7", "stat requests lock done 3 and five words more",
         "stat duration_seconds lock x 2"]


def daemon(path, answers):
    """Serve one client per entry of answers: the greeting, then its stats."""
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    srv.bind(path)
    srv.listen(4)

    def loop():
        for msgs in answers:
            c, _ = srv.accept()
            c.recv(256)  # the client's greeting
            c.send(b"hello 2 queries")
            c.recv(256)  # "status"
            for m in msgs:
                c.send(m.encode())
            c.close()
        srv.close()
    t = threading.Thread(target=loop, daemon=True)
    t.start()
    return t


def status(path, *args, rc=0):
    p = subprocess.run([RTID, "serve", "status", "--socket", path, *args],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == rc, (args, p.returncode, p.stdout, p.stderr)
    return p.stdout, p.stderr


with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "s")
    t = daemon(path, [STATS + ["end"]] * 3 + [["stat attaches 1", "nonsense"]] * 2)
    words, _ = status(path)

    def labelled(m):
        w = m.split()
        if w[0] == "duration_seconds" and len(w) == 4:
            return "duration_seconds %s sum %s count %s" % tuple(w[1:])
        if w[0] == "latency_ms" and len(w) == 5:
            return "latency_ms %s p50 %s p90 %s p99 %s" % tuple(w[1:])
        return m
    assert words.splitlines() == [labelled(s[5:]) for s in STATS if " " in s[5:]] + \
        ["version - (a daemon older than this rtid: it does not say)"], words  # a bare word: no stat
    o = json.loads(status(path, "--json")[0])
    assert o["uptime_s"] == 12.5 and o["attaches"] == 1 and o["driver"] == "580.95.05", o
    assert o["busy"] == "2.5e", o  # not a number: kept as the daemon said it
    assert o["requests"] == {"lock": {"done": 3}, "unlock": {"not-served": 2},  # 'x y z': no count
                             "get-state": {"error": 4}, "checkpoint": {"error": 1},
                             'lo"c\\k': {"done": 5}}, o
    assert o["huge"] == "1e999" and o["up"] == 7, o  # out of range: kept as the daemon said it
    assert o["errors"] == {"get-state": {"worker-failed": 3, "timeout": 1}}, o
    assert o["latency_ms"]["get-restore-tid"] == {"p50": 0.4, "p90": 0.9, "p99": 1.5}, o
    assert o["latency_ms"]["lock"] == {"p50": 1, "p90": None, "p99": 3}, o
    assert "lonely" not in o and "odd" not in o, o
    prom, _ = status(path, "--prometheus")
    lines = prom.splitlines()
    for want in ('rtid_driver_info{version="580.95.05"} 1', "rtid_attaches_total 1",
                 "rtid_worker_failures_total 0", "rtid_up 1",
                 "# TYPE rtid_uptime_s untyped", "rtid_uptime_s 12.5",  # a newer daemon's
                 'rtid_requests_total{op="lock",outcome="done"} 3',
                 'rtid_requests_total{op="unlock",outcome="not-served"} 2',
                 'rtid_requests_total{op="get-state",outcome="error",reason="worker-failed"} 3',
                 'rtid_requests_total{op="get-state",outcome="error",reason="timeout"} 1',
                 'rtid_requests_total{op="checkpoint",outcome="error"} 1',  # no reasons said
                 '# TYPE rtid_request_duration_seconds histogram',
                 'rtid_request_duration_seconds_bucket{op="lock",le="+Inf"} 2',  # no bounds said
                 'rtid_request_duration_seconds_sum{op="lock"} 0.004',
                 'rtid_request_duration_seconds_count{op="lock"} 2',
                 'rtid_requests_total{op="lo\\"c\\\\k",outcome="done"} 5'):
        assert want in lines, (want, lines)
    # get-state's errors are told by reason: no total beside them to count twice.
    assert 'rtid_requests_total{op="get-state",outcome="error"} 4' not in lines, lines
    assert not any("latency_ms" in l or "quantile" in l for l in lines), lines
    # A daemon that lists no series: none at 0, and no build_info without a version.
    assert not any(l.endswith(" 0") and l.startswith("rtid_requests_total") for l in lines), lines
    assert not any(l.startswith("rtid_build_info") for l in lines), lines
    assert not any("huge" in l or "many" in l or "rtid_up 7" in l for l in lines), lines
    assert [l for l in lines if l.startswith("rtid_request_duration_seconds_sum")] == \
        ['rtid_request_duration_seconds_sum{op="lock"} 0.004'], lines
    assert not any("odd" in l or "lonely" in l or "busy" in l for l in lines), lines
    out, err = status(path, rc=1)  # a message that is no stat
    assert "rtid serve status" in err and out == "", (out, err)
    prom, _ = status(path, "--prometheus", rc=1)  # the same: rtid_up 0, nothing else
    assert "rtid_up 0" in prom.splitlines() and "rtid_attaches_total" not in prom, prom
    t.join(10)

# A daemon of this rtid's: its version and start, failed attaches, the
# series it counts, and its latency histogram.
NEW = ["stat version 9.9.9", "stat start_time_seconds 1700000000.250", "stat attach_failures 2",
       "stat ops a-op b-op", "stat outcomes tid error no-such-process", "stat reasons timeout busy",
       "stat duration_le 0.001 0.01 1", "stat requests a-op tid 4", "stat requests a-op error 1",
       "stat errors a-op busy 1", "stat duration_seconds a-op 0.5 5",
       "stat duration_buckets a-op 1 3 5", "stat duration_seconds b-op 0 0",
       "stat duration_buckets b-op 0 0 0", "stat duration_seconds c-op 2 2",
       "stat duration_buckets c-op 2 1 2",  # not cumulative: +Inf only
       "stat duration_seconds d-op 1 1", "stat duration_buckets d-op 1 1",  # too few
       "stat latency_ms a-op 1 2 3", "end"]
with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "s")
    t = daemon(path, [NEW] * 3)
    words = status(path)[0].splitlines()
    assert words == ["version 9.9.9", "start_time_seconds 1700000000.250", "attach_failures 2",
                     "requests a-op tid 4", "requests a-op error 1", "errors a-op busy 1",
                     "duration_seconds a-op sum 0.5 count 5", "duration_seconds c-op sum 2 count 2",
                     "duration_seconds d-op sum 1 count 1",
                     "latency_ms a-op p50 1 p90 2 p99 3"], words
    o = json.loads(status(path, "--json")[0])
    assert o["version"] == "9.9.9" and o["start_time_seconds"] == 1700000000.25, o
    assert o["attach_failures"] == 2, o
    lines = status(path, "--prometheus")[0].splitlines()
    req = [l for l in lines if l.startswith("rtid_requests_total")]
    assert req == ['rtid_requests_total{op="a-op",outcome="tid"} 4',
                   'rtid_requests_total{op="a-op",outcome="error",reason="timeout"} 0',
                   'rtid_requests_total{op="a-op",outcome="error",reason="busy"} 1',
                   'rtid_requests_total{op="a-op",outcome="no-such-process"} 0',
                   'rtid_requests_total{op="b-op",outcome="tid"} 0',
                   'rtid_requests_total{op="b-op",outcome="error",reason="timeout"} 0',
                   'rtid_requests_total{op="b-op",outcome="error",reason="busy"} 0',
                   'rtid_requests_total{op="b-op",outcome="no-such-process"} 0'], req
    for want in ('rtid_build_info{version="9.9.9"} 1', "rtid_start_time_seconds 1700000000.250",
                 "# TYPE rtid_start_time_seconds gauge", "rtid_attach_failures_total 2",
                 "# TYPE rtid_attach_failures_total counter",
                 "# TYPE rtid_request_duration_seconds histogram"):
        assert want in lines, (want, lines)
    hist = [l for l in lines if l.startswith("rtid_request_duration_seconds")]
    assert hist == ['rtid_request_duration_seconds_bucket{op="a-op",le="0.001"} 1',
                    'rtid_request_duration_seconds_bucket{op="a-op",le="0.01"} 3',
                    'rtid_request_duration_seconds_bucket{op="a-op",le="1"} 5',
                    'rtid_request_duration_seconds_bucket{op="a-op",le="+Inf"} 5',
                    'rtid_request_duration_seconds_sum{op="a-op"} 0.5',
                    'rtid_request_duration_seconds_count{op="a-op"} 5',
                    'rtid_request_duration_seconds_bucket{op="b-op",le="0.001"} 0',
                    'rtid_request_duration_seconds_bucket{op="b-op",le="0.01"} 0',
                    'rtid_request_duration_seconds_bucket{op="b-op",le="1"} 0',
                    'rtid_request_duration_seconds_bucket{op="b-op",le="+Inf"} 0',
                    'rtid_request_duration_seconds_sum{op="b-op"} 0',
                    'rtid_request_duration_seconds_count{op="b-op"} 0',
                    'rtid_request_duration_seconds_bucket{op="c-op",le="+Inf"} 2',
                    'rtid_request_duration_seconds_sum{op="c-op"} 2',
                    'rtid_request_duration_seconds_count{op="c-op"} 2',
                    'rtid_request_duration_seconds_bucket{op="d-op",le="+Inf"} 1',
                    'rtid_request_duration_seconds_sum{op="d-op"} 1',
                    'rtid_request_duration_seconds_count{op="d-op"} 1'], hist
    t.join(10)

# rtid serve --version: rtid's, exit 0, as rtid --version.
for args in (["--version"], ["serve", "--version"]):
    p = subprocess.run([RTID, *args], capture_output=True, text=True, timeout=30)
    assert p.returncode == 0 and p.stdout.startswith("rtid ") and p.stderr == "", (args, p)
    if args == ["--version"]:
        plain = p.stdout
    assert p.stdout == plain, (p.stdout, plain)

# Where the Prometheus file cannot be put: said with the reason, exit status 1,
# and no temporary file left beside it. A stray argument: usage, exit 2.
with tempfile.TemporaryDirectory() as d:
    gone = os.path.join(d, "no-daemon")
    taken = os.path.join(d, "tf", "rtid.prom")
    os.makedirs(taken)  # a directory where the file would go: the rename fails
    out, err = status(gone, "--prometheus", "--output", taken, rc=1)
    assert "%s: Is a directory" % taken in err and out == "", (out, err)
    assert os.listdir(os.path.dirname(taken)) == ["rtid.prom"], os.listdir(os.path.dirname(taken))
    assert os.listdir(taken) == [], os.listdir(taken)
    long = os.path.join(d, "x" * 4100)  # the temporary name beside it would not fit
    out, err = status(gone, "--prometheus", "--output", long, rc=1)
    assert "File name too long" in err and out == "", (out, err)
    assert sorted(os.listdir(d)) == ["tf"], os.listdir(d)
    # A disk that fails the write or the sync (libfiu, where installed): exit
    # 1, the file as it was, and no temporary file beside it.
    prom = os.path.join(d, "tf", "ok.prom")
    with open(prom, "w") as f:
        f.write("old\n")
    fiu = "/usr/lib/fiu/fiu_posix_preload.so"
    # Not under sanitizers: libfiu's preload would come before their runtime.
    if shutil.which("fiu-run") and os.path.exists(fiu) and not os.environ.get("RTID_UNDER_SANITIZER"):
        for point, errno_, said in (("posix/io/rw/write", 28, None),
                                    ("posix/io/sync/fsync", 5, "Input/output error")):
            p = subprocess.run(["fiu-run", "-x", "-c", "enable name=%s,failinfo=%d" % (point, errno_),
                                RTID, "serve", "status", "--socket", gone, "--prometheus",
                                "--output", prom], capture_output=True, text=True, timeout=30)
            assert p.returncode == 1, (point, p.returncode, p.stdout, p.stderr)
            assert said is None or "%s: %s" % (prom, said) in p.stderr, (point, p.stderr)
            with open(prom) as f:
                assert f.read() == "old\n", point
            assert sorted(os.listdir(os.path.dirname(prom))) == ["ok.prom", "rtid.prom"], \
                (point, os.listdir(os.path.dirname(prom)))
    else:
        print("no libfiu (fiu-run), or under sanitizers: a failing write and sync are not checked")
    out, err = status(gone, "stray", rc=2)
    assert "unexpected argument 'stray'" in err and out == "", (out, err)
print("serve status: words, JSON and Prometheus from every kind of stat; odd ones survived")
