#!/usr/bin/env python3
"""rtid serve status against a scripted daemon: every kind of stat message
(counters, the driver, requests by operation and outcome, latency
percentiles) in words, as JSON and for Prometheus, and what a daemon may
send that is odd (a number that is not one, a short message, an unknown
kind) shown as it is or left out, never a crash; a message that is no stat
fails the command.

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
    assert words.splitlines() == [s[5:] for s in STATS if " " in s[5:]], words  # a bare word: no stat
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
                 'rtid_request_duration_seconds{op="get-restore-tid",quantile="0.99"} 0.0015',
                 'rtid_request_duration_seconds_sum{op="lock"} 0.004',
                 'rtid_request_duration_seconds_count{op="lock"} 2',
                 'rtid_requests_total{op="lo\\"c\\\\k",outcome="done"} 5'):
        assert want in lines, (want, lines)
    # get-state's errors are told by reason: no total beside them to count twice.
    assert 'rtid_requests_total{op="get-state",outcome="error"} 4' not in lines, lines
    assert not any("latency_ms" in l for l in lines), lines
    assert not any("huge" in l or "many" in l or "rtid_up 7" in l for l in lines), lines
    assert [l for l in lines if l.startswith("rtid_request_duration_seconds_sum")] == \
        ['rtid_request_duration_seconds_sum{op="lock"} 0.004'], lines
    assert not any("odd" in l or "lonely" in l or "busy" in l for l in lines), lines
    out, err = status(path, rc=1)  # a message that is no stat
    assert "rtid serve status" in err and out == "", (out, err)
    prom, _ = status(path, "--prometheus", rc=1)  # the same: rtid_up 0, nothing else
    assert "rtid_up 0" in prom.splitlines() and "rtid_attaches_total" not in prom, prom
    t.join(10)

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
