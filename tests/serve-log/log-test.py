#!/usr/bin/env python3
"""rtid serve's log as its readers take it: under journald (JOURNAL_STREAM
names the file stderr is) every line begins with sd-daemon's priority
("<6>" info, "<4>" a warning such as a malformed request), which the journal
turns into the line's priority; anywhere else (by hand, a file, a
JOURNAL_STREAM that names another file, or is not DEV:INO at all) every line begins with the time
in UTC, to the millisecond, as the shim's log stamps it. A failure is at
error ("<3>": the driver library cannot be loaded), the first line names the
version and the settings, and the summary of lines left out comes at the end
of its window also when nothing else happens.

    log-test.py RTID_BIN"""
import os
import re
import socket
import subprocess
import sys
import tempfile
import time

RTID = sys.argv[1]
STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z rtid serve: ")
VERSION = subprocess.run([RTID, "--version"], capture_output=True, text=True,
                         check=True).stdout.split()[1]


def run_daemon(d, name, journal):
    """A daemon logging to d/name, JOURNAL_STREAM per journal ("self": that
    file's, "other": another file's, "junk": not DEV:INO, "tail": that
    file's DEV:INO with more after it, None: unset); one good request and one
    malformed, then stopped. Its log lines."""
    sock, log = os.path.join(d, name + ".sock"), os.path.join(d, name + ".log")
    env = {k: v for k, v in os.environ.items() if k != "JOURNAL_STREAM"}
    with open(log, "w") as f:
        st = os.fstat(f.fileno()) if journal == "self" else os.stat(d)
        if journal:
            env["JOURNAL_STREAM"] = "%d:%d" % (st.st_dev, st.st_ino)
        if journal == "junk":
            env["JOURNAL_STREAM"] = "journal"
        if journal == "tail":
            st = os.fstat(f.fileno())
            env["JOURNAL_STREAM"] = "%d:%dx" % (st.st_dev, st.st_ino)
        r, w = os.pipe()
        p = subprocess.Popen([RTID, "serve", "--socket", sock, "--libcuda",
                              os.path.join(d, "no-libcuda.so"), "--ready-fd", str(w)],
                             pass_fds=[w], stderr=f, env=env)
        os.close(w)
        assert os.read(r, 16).startswith(b"ready"), "rtid serve did not start"
        os.close(r)
        c = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        c.connect(sock)
        c.send(b"hello 2")
        c.recv(256)
        c.send(b"lock %d 1000" % os.getpid())
        assert b"not-served" in c.recv(256)
        c.send(b"no such request")
        c.recv(256)  # closed by the daemon: EOF
        c.close()
        p.terminate()
        assert p.wait(60) == 0
    with open(log) as f:
        return f.read().splitlines()


def burst(sock, log):
    """Eight malformed requests (five said, three left out), then the wait
    for the summary line: (the line or None, seconds waited)."""
    for _ in range(8):
        c = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        c.connect(sock)
        c.send(b"hello 2")
        c.recv(256)
        c.send(b"no such request")
        c.recv(256)
        c.close()
    sent = time.monotonic()
    said = None
    while said is None and time.monotonic() < sent + 30:
        with open(log) as g:
            said = next((l for l in g if "more lines about clients left out" in l), None)
        if said is None:
            time.sleep(0.2)  # polling a file for a line: no signal to wait on
    return said, time.monotonic() - sent


with tempfile.TemporaryDirectory() as d:
    lines = run_daemon(d, "journal", "self")
    assert lines and all(re.match(r"^<[0-7]>rtid serve: ", l) for l in lines), lines
    assert any(l.startswith("<6>rtid serve: lock ") for l in lines), lines
    assert any(l.startswith("<4>rtid serve: client pid ") and "malformed" in l
               for l in lines), lines
    assert lines[0].startswith("<6>rtid serve: rtid %s serving queries on " % VERSION), lines
    assert "deadlines: query " in lines[0] and "driver library " in lines[0], lines
    # The driver library that cannot be loaded: an error, not info.
    assert any(l.startswith("<3>rtid serve: ") and "a new attach" in l for l in lines), lines
    # A JOURNAL_STREAM that cannot be read as DEV:INO is not the journal.
    for name, journal in (("plain", None), ("other", "other"), ("junk", "junk"),
                          ("tail", "tail")):
        lines = run_daemon(d, name, journal)
        assert lines and all(STAMP.match(l) for l in lines), (name, lines)
        assert not any(l.startswith("<") for l in lines), (name, lines)
    # Past its burst, what a client makes the daemon say is left out; the
    # count comes at the end of the window (10 s) with nothing else to wake
    # the daemon. Before, it waited for the next event, up to an hour.
    sock, log = os.path.join(d, "burst.sock"), os.path.join(d, "burst.log")
    with open(log, "w") as f:
        r, w = os.pipe()
        p = subprocess.Popen([RTID, "serve", "--socket", sock, "--libcuda",
                              os.path.join(d, "no-libcuda.so"), "--ready-fd", str(w)],
                             pass_fds=[w], stderr=f)
        os.close(w)
        try:
            assert os.read(r, 16).startswith(b"ready"), "rtid serve did not start"
            os.close(r)
            said, waited = burst(sock, log)
        finally:  # no daemon left behind by a failed assert
            p.terminate()
            rc = p.wait(60)
    assert rc == 0, rc
    assert said and "3 more lines about clients left out in 10 s" in said, open(log).read()
    assert waited < 20, waited
print("serve log: priorities under journald, UTC stamps elsewhere, version first, summaries on time")
