#!/usr/bin/env python3
"""rtid serve status --prometheus against a real rtid serve, read by
prometheus_client's own parser (and promtool where installed): every family
has its HELP and TYPE and one block; a fresh daemon already has every
operation x outcome series (an error by each reason known in advance) at 0,
so that a rate() sees the first event; rtid_build_info names the daemon's
version (rtid --version's) and rtid_start_time_seconds its start; latency is
a histogram in seconds (cumulative buckets up to +Inf, _sum and _count, no
quantile); counters end in _total; an error carries its reason, an action
asked of a queries-only daemon is "not-served", a pid that names nothing
"no-such-process" and a thread "not-a-process" (none of them denied); a
failed attach is counted apart; rtid_up is 1 with the daemon, 0 without it
(exit status 1), also through --output, which replaces the file whole.

The daemon's driver library does not exist: every attach fails and every
query is answered "error worker-failed", which is the error this test needs;
no GPU, no mock.

    prom-test.py RTID_BIN"""
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time

try:
    from prometheus_client.parser import text_string_to_metric_families
except ImportError:
    # Debian's package is for Debian's python3, which may not be first on PATH.
    if os.path.realpath(sys.executable) != os.path.realpath("/usr/bin/python3") and \
            os.access("/usr/bin/python3", os.X_OK):
        os.execv("/usr/bin/python3", ["/usr/bin/python3", *sys.argv])
    print("skipped: python3-prometheus-client is not installed (apt-get install "
          "python3-prometheus-client)")
    sys.exit(77)

RTID = sys.argv[1]


def status(sock, *args, rc=0):
    p = subprocess.run([RTID, "serve", "status", "--socket", sock, "--prometheus", *args],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == rc, (args, p.returncode, p.stdout, p.stderr)
    return p.stdout


def families(text):
    fams = {f.name: f for f in text_string_to_metric_families(text)}
    for f in fams.values():
        assert f.type != "unknown", ("a family without its TYPE", f.name, text)
        assert f.documentation, ("a family without its HELP", f.name)
    # One block per family: the samples of a family never come back after another's.
    seen, last = [], None
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            name = line.split()[2]
            assert name not in seen, ("a family in two blocks", name, text)
            seen.append(name)
    if shutil.which("promtool"):
        p = subprocess.run(["promtool", "check", "metrics"], input=text, text=True,
                           capture_output=True, timeout=60)
        assert p.returncode == 0, p.stdout + p.stderr
    return fams


def samples(fams, name):
    return [s for f in fams.values() for s in f.samples if s.name == name]


def gone_pid():
    """A pid that names no process now: a child's, reaped."""
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


with tempfile.TemporaryDirectory() as d:
    sock = os.path.join(d, "rtid.sock")
    r, w = os.pipe()
    before = time.time()
    daemon = subprocess.Popen([RTID, "serve", "--socket", sock, "--libcuda",
                               os.path.join(d, "no-libcuda.so"), "--ready-fd", str(w)],
                              pass_fds=[w], stderr=subprocess.DEVNULL)
    os.close(w)
    try:
        assert os.read(r, 16).startswith(b"ready"), "rtid serve did not start"
        os.close(r)
        version = subprocess.run([RTID, "--version"], capture_output=True, text=True,
                                 check=True).stdout.split()[1]

        # A fresh daemon: every series it can count is there, at 0.
        fresh = families(status(sock))
        zero = {(s.labels["op"], s.labels["outcome"], s.labels.get("reason")): s.value
                for s in samples(fresh, "rtid_requests_total")}
        ops = ("get-restore-tid", "get-state", "lock", "checkpoint", "restore", "unlock")
        for op in ops:
            for outcome in ("tid", "state", "done", "cuerr", "denied", "unknown", "not-served",
                            "no-such-process", "not-a-process"):
                assert zero.get((op, outcome, None)) == 0, (op, outcome, zero)
            for reason in ("worker-failed", "worker-crashed", "timeout", "shutting-down",
                           "busy", "in-driver", "process-changed"):
                assert zero.get((op, "error", reason)) == 0, (op, reason, zero)
            assert (op, "error", None) not in zero, zero  # by reason only: no double count
            assert (op, "started", None) not in zero, zero  # a note, not an outcome
        assert set(zero.values()) == {0}, zero
        assert [s.labels for s in samples(fresh, "rtid_build_info")] == [{"version": version}]
        start = [s.value for s in samples(fresh, "rtid_start_time_seconds")]
        assert len(start) == 1 and before - 1 <= start[0] <= time.time(), (before, start)
        assert fresh["rtid_start_time_seconds"].type == "gauge"
        assert samples(fresh, "rtid_uptime_seconds"), fresh  # kept beside the start
        for op in ops:  # a histogram for each operation from the start, empty
            assert [s.value for s in samples(fresh, "rtid_request_duration_seconds_count")
                    if s.labels["op"] == op] == [0], op

        c = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        c.connect(sock)
        c.send(b"hello 2")
        assert c.recv(256) == b"hello 2 queries"
        me = os.getpid()
        held = threading.Event()
        t = threading.Thread(target=held.wait)
        t.start()
        gone = gone_pid()
        try:
            for req, want in ((b"get-restore-tid %d" % me, b"error get-restore-tid"),
                              (b"lock %d 1000" % me, b"error lock %d not-served" % me),
                              (b"get-state %d" % me, b"error get-state"),
                              (b"get-restore-tid %d" % gone, b"denied get-restore-tid"),
                              (b"get-restore-tid %d" % t.native_id, b"denied get-restore-tid")):
                c.send(req)
                ans = c.recv(256)
                assert ans.startswith(want), (req, ans)
        finally:
            held.set()
            t.join()
        c.close()

        # In words: the daemon's version first, and no number without its label
        # (the word before it never a number too).
        words = subprocess.run([RTID, "serve", "status", "--socket", sock], capture_output=True,
                               text=True, timeout=60, check=True).stdout.splitlines()
        assert words[0] == "version " + version, words

        def isnum(x):
            try:
                float(x)
                return True
            except ValueError:
                return False
        for line in words:
            w = line.split()
            assert not isnum(w[0]) and all(not (isnum(a) and isnum(b)) for a, b in zip(w, w[1:])), \
                (line, words)
        assert "duration_seconds get-restore-tid sum" in "\n".join(words), words
        assert any(l.startswith("latency_ms get-restore-tid p50 ") for l in words), words

        text = status(sock)
        fams = families(text)
        assert [s.value for s in samples(fams, "rtid_up")] == [1], text
        assert [s.value for s in samples(fams, "rtid_scrape_error")] == [0], text
        for name in ("rtid_attaches_total", "rtid_worker_failures_total",
                     "rtid_attach_failures_total"):
            assert fams[name[:-6]].type == "counter", (name, text)
        # No driver library: every attach fails, and is counted as failed.
        attaches = samples(fams, "rtid_attaches_total")[0].value
        failed = samples(fams, "rtid_attach_failures_total")[0].value
        assert 1 <= failed <= attaches, (failed, attaches)
        assert not any("_ms" in n for n in fams), text  # base units only
        req = {(s.labels["op"], s.labels["outcome"], s.labels.get("reason")): s.value
               for s in samples(fams, "rtid_requests_total") if s.value}
        assert req == {("get-restore-tid", "error", "worker-failed"): 1,
                       ("get-state", "error", "worker-failed"): 1,
                       ("lock", "not-served", None): 1,
                       ("get-restore-tid", "no-such-process", None): 1,
                       ("get-restore-tid", "not-a-process", None): 1}, req
        assert len(samples(fams, "rtid_requests_total")) == len(zero), "a series came or went"
        lat = fams["rtid_request_duration_seconds"]
        assert lat.type == "histogram", lat
        assert not any("quantile" in s.labels for s in lat.samples), lat.samples
        count = {s.labels["op"]: s.value for s in lat.samples if s.name.endswith("_count")}
        total = {s.labels["op"]: s.value for s in lat.samples if s.name.endswith("_sum")}
        assert count == {"get-restore-tid": 3, "get-state": 1, "lock": 1, "checkpoint": 0,
                         "restore": 0, "unlock": 0}, lat.samples
        assert all(0 <= v < 60 for v in total.values()), total  # seconds, not ms
        for op in ops:
            b = [(s.labels["le"], s.value) for s in lat.samples
                 if s.name.endswith("_bucket") and s.labels["op"] == op]
            les = [float(le) for le, _ in b]
            assert les == sorted(les) and les[-1] == float("inf") and len(les) >= 10, b
            assert 0.001 in les and 60 in les, les  # a driver call's range, in seconds
            assert [v for _, v in b] == sorted(v for _, v in b), b  # cumulative
            assert b[-1][1] == count[op], (b, count)
            # Every answer here came back within a minute: all in the last bound.
            assert dict(b)["60"] == count[op], b

        # --output: the file whole, readable by a collector, nothing left beside it.
        out = os.path.join(d, "tf", "rtid.prom")
        os.mkdir(os.path.dirname(out))
        with open(out, "w") as f:
            f.write("stale\n")
        assert status(sock, "--output", out) == ""
        with open(out) as f:
            assert [s.value for s in samples(families(f.read()), "rtid_up")] == [1]
        assert stat.S_IMODE(os.stat(out).st_mode) == 0o644, oct(os.stat(out).st_mode)
        assert os.listdir(os.path.dirname(out)) == ["rtid.prom"], os.listdir(os.path.dirname(out))
    finally:
        daemon.terminate()
        daemon.wait(60)

    # The daemon gone: rtid_up 0, printed and written, exit status 1.
    down = families(status(sock, rc=1))
    assert [s.value for s in samples(down, "rtid_up")] == [0], down
    status(sock, "--output", out, rc=1)
    with open(out) as f:
        assert [s.value for s in samples(families(f.read()), "rtid_up")] == [0]
    assert os.listdir(os.path.dirname(out)) == ["rtid.prom"], os.listdir(os.path.dirname(out))
    # An --output that cannot be written: said, exit status 1.
    status(sock, "--output", os.path.join(d, "no", "dir", "rtid.prom"), rc=1)
print("serve status --prometheus: every family typed, seconds, reasons, rtid_up 1 and 0, "
      "--output whole")
