#!/usr/bin/env python3
"""rtid serve status --prometheus against a real rtid serve, read by
prometheus_client's own parser (and promtool where installed): every family
has its HELP and TYPE and one block, latency is a summary in seconds with
_sum and _count, counters end in _total, an error carries its reason, an
action asked of a queries-only daemon is "not-served" (not an error), and
rtid_up is 1 with the daemon, 0 without it (exit status 1), also through
--output, which replaces the file whole.

The daemon's driver library does not exist: every query is answered
"error worker-failed", which is the error this test needs; no GPU, no mock.

    prom-test.py RTID_BIN"""
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile

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


with tempfile.TemporaryDirectory() as d:
    sock = os.path.join(d, "rtid.sock")
    r, w = os.pipe()
    daemon = subprocess.Popen([RTID, "serve", "--socket", sock, "--libcuda",
                               os.path.join(d, "no-libcuda.so"), "--ready-fd", str(w)],
                              pass_fds=[w], stderr=subprocess.DEVNULL)
    os.close(w)
    try:
        assert os.read(r, 16).startswith(b"ready"), "rtid serve did not start"
        os.close(r)
        c = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        c.connect(sock)
        c.send(b"hello 2")
        assert c.recv(256) == b"hello 2 queries"
        me = os.getpid()
        for req, want in ((b"get-restore-tid %d" % me, b"error get-restore-tid"),
                          (b"lock %d 1000" % me, b"error lock %d not-served" % me),
                          (b"get-state %d" % me, b"error get-state")):
            c.send(req)
            ans = c.recv(256)
            assert ans.startswith(want), (req, ans)
        c.close()

        text = status(sock)
        fams = families(text)
        assert [s.value for s in samples(fams, "rtid_up")] == [1], text
        for name in ("rtid_attaches_total", "rtid_worker_failures_total"):
            assert fams[name[:-6]].type == "counter", (name, text)
        assert not any("_ms" in n for n in fams), text  # base units only
        req = {(s.labels["op"], s.labels["outcome"], s.labels.get("reason")): s.value
               for s in samples(fams, "rtid_requests_total")}
        assert req == {("get-restore-tid", "error", "worker-failed"): 1,
                       ("get-state", "error", "worker-failed"): 1,
                       ("lock", "not-served", None): 1}, req
        lat = fams["rtid_request_duration_seconds"]
        assert lat.type == "summary", lat
        count = {s.labels["op"]: s.value for s in lat.samples if s.name.endswith("_count")}
        total = {s.labels["op"]: s.value for s in lat.samples if s.name.endswith("_sum")}
        assert count == {"get-restore-tid": 1, "get-state": 1, "lock": 1}, lat.samples
        assert all(0 <= v < 60 for v in total.values()), total  # seconds, not ms
        assert any("quantile" in s.labels for s in lat.samples), lat.samples

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
