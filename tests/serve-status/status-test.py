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
import socket
import subprocess
import sys
import tempfile
import threading

RTID = sys.argv[1]
STATS = ["stat uptime_s 12.5", "stat driver 580.95.05", "stat attaches 1",
         "stat worker_failures 0", "stat requests lock done 3", "stat requests lock x y z",
         "stat latency_ms get-restore-tid 0.4 0.9 1.5", "stat latency_ms lock 1 n/a 3",
         "stat lonely", "stat odd thing here", "stat busy 2.5e"]


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
    t = daemon(path, [STATS + ["end"]] * 3 + [["stat attaches 1", "nonsense"]])
    words, _ = status(path)
    assert words.splitlines() == [s[5:] for s in STATS if " " in s[5:]], words  # a bare word: no stat
    o = json.loads(status(path, "--json")[0])
    assert o["uptime_s"] == 12.5 and o["attaches"] == 1 and o["driver"] == "580.95.05", o
    assert o["busy"] == "2.5e", o  # not a number: kept as the daemon said it
    assert o["requests"] == {"lock": {"done": 3}}, o  # 'x y z' is no count: left out
    assert o["latency_ms"]["get-restore-tid"] == {"p50": 0.4, "p90": 0.9, "p99": 1.5}, o
    assert o["latency_ms"]["lock"] == {"p50": 1, "p90": None, "p99": 3}, o
    assert "lonely" not in o and "odd" not in o, o
    prom, _ = status(path, "--prometheus")
    lines = prom.splitlines()
    for want in ('rtid_driver_info{version="580.95.05"} 1', "rtid_attaches_total 1",
                 "rtid_worker_failures_total 0", "rtid_uptime_s 12.5",
                 'rtid_requests_total{op="lock",outcome="done"} 3',
                 'rtid_latency_ms{op="get-restore-tid",quantile="0.99"} 1.5'):
        assert want in lines, (want, lines)
    assert not any("odd" in l or "lonely" in l or "busy" in l for l in lines), lines
    _, err = status(path, rc=1)  # a message that is no stat
    assert "rtid serve status" in err, err
    t.join(10)
print("serve status: words, JSON and Prometheus from every kind of stat; odd ones survived")
