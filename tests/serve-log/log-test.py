#!/usr/bin/env python3
"""rtid serve's log as its readers take it: under journald (JOURNAL_STREAM
names the file stderr is) every line begins with sd-daemon's priority
("<6>" info, "<4>" a warning such as a malformed request), which the journal
turns into the line's priority; anywhere else (by hand, a file, a
JOURNAL_STREAM that names another file, or is not DEV:INO at all) every line begins with the local
time, to the millisecond, with its UTC offset.

    log-test.py RTID_BIN"""
import os
import re
import socket
import subprocess
import sys
import tempfile

RTID = sys.argv[1]
STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d{4} rtid serve: ")


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


with tempfile.TemporaryDirectory() as d:
    lines = run_daemon(d, "journal", "self")
    assert lines and all(re.match(r"^<[0-7]>rtid serve: ", l) for l in lines), lines
    assert any(l.startswith("<6>rtid serve: lock ") for l in lines), lines
    assert any(l.startswith("<4>rtid serve: client pid ") and "malformed" in l
               for l in lines), lines
    # A JOURNAL_STREAM that cannot be read as DEV:INO is not the journal.
    for name, journal in (("plain", None), ("other", "other"), ("junk", "junk"),
                          ("tail", "tail")):
        lines = run_daemon(d, name, journal)
        assert lines and all(STAMP.match(l) for l in lines), (name, lines)
        assert not any(l.startswith("<") for l in lines), (name, lines)
print("serve log: priorities under journald, local time stamps elsewhere")
