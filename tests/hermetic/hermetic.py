#!/usr/bin/env python3
"""No test reaches the node: the programs of a build with its tests
(-Ddefaults=build) carry no path of the node's rtid (/run/rtid, /etc/rtid,
/var/lib/rtid) as a default, and run with an empty environment, as some tests
run them, they ask the daemon at the build's own default socket and open
nothing of the node's.

1. Every program and library of the build: no such path in its bytes (a
   string that starts with one; "PREFIX/etc/rtid/shim.conf" is the
   unpacked-install form, not the node's).
2. A listener at the build's default socket; rtid serve status, the shim,
   resolve through the service, resolve in scan mode, doctor and attest show,
   each under env -i: the listener counts the connections (each client
   reached it), and strace, where it can run, shows no system call naming a
   node path.

Usage: hermetic.py DEFAULTS BUILD_DIR DEFAULT_SOCKET RTID_BIN
"""
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading

NODE = re.compile(rb"(?<![A-Za-z0-9_.%-])/(run/rtid|etc/rtid|var/lib/rtid)\b")


def fail(msg):
    print("hermetic: " + msg, file=sys.stderr)
    sys.exit(1)


def programs(build):
    for top, dirs, files in os.walk(build):
        dirs[:] = [d for d in dirs if d != "meson-private" and not d.endswith(".p")]
        for f in files:
            p = os.path.join(top, f)
            if os.path.islink(p) or not os.path.isfile(p):
                continue
            with open(p, "rb") as fh:
                if fh.read(4) != b"\x7fELF":
                    continue
                yield p, fh.read()


def main():
    defaults, build, sock, rtid = sys.argv[1:5]
    if defaults != "build":
        print("hermetic: this build compiles the node's paths as defaults "
              "(-Ddefaults=node): its tests are not hermetic")
        sys.exit(77)
    if sock.startswith(("/run/", "/etc/", "/var/")) or not sock.startswith(build):
        fail("the default socket %s is not under the build %s" % (sock, build))

    found = []
    n = 0
    for path, data in programs(build):
        n += 1
        for m in NODE.finditer(data):
            end = data.find(b"\0", m.start())
            found.append("%s: %s" % (path, data[m.start():end][:80].decode(errors="replace")))
    if n < 5:
        fail("only %d programs found under %s" % (n, build))
    if found:
        fail("node paths compiled in:\n  " + "\n  ".join(found))
    print("hermetic: %d programs, no node path among their bytes" % n)

    # The build's own settings file: the plugin's engine test writes one
    # while it runs (never beside this test, which runs alone) and removes
    # it; one left by a run killed before its clean-up would point the shim
    # elsewhere. The engine test's rule (node-conf.sh) removes that one.
    root = os.path.dirname(os.path.dirname(os.path.dirname(sock)))
    conf = os.path.join(root, "etc", "rtid", "shim.conf")
    rule = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "engine", "node-conf.sh")
    r = subprocess.run(["sh", rule, conf], capture_output=True, text=True)
    if r.returncode != 0:
        fail("the build's settings file is not the engine test's: %s" % r.stdout.strip())
    if r.stdout:
        print("hermetic: " + r.stdout.strip())

    # The listener: it takes each connection and closes it (a daemon that
    # failed), so that every client ends at once.
    os.makedirs(os.path.dirname(sock), exist_ok=True)
    if os.path.exists(sock):
        os.unlink(sock)
    lis = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    lis.bind(sock)
    lis.listen(64)
    accepts = []

    def serve():
        while True:
            try:
                c, _ = lis.accept()
            except OSError:
                return
            accepts.append(1)
            c.close()

    threading.Thread(target=serve, daemon=True).start()
    work = tempfile.mkdtemp(prefix="rtid-hermetic-")
    try:
        shim = os.path.join(work, "cuda-checkpoint")
        os.symlink(rtid, shim)
        me = str(os.getpid())
        runs = [
            ("serve status", [rtid, "serve", "status"], True),
            ("the shim", [shim, "--get-restore-tid", "--pid", me], True),
            ("resolve --backend service", [rtid, "resolve", "--backend", "service", me], True),
            ("resolve --mode scan", [rtid, "resolve", "--mode", "scan", me], False),
            ("doctor", [rtid, "doctor"], False),
            ("attest show", [rtid, "attest", "show"], False),
        ]
        strace = shutil.which("strace")
        if strace and subprocess.run([strace, "-o", "/dev/null", "true"],
                                     capture_output=True).returncode != 0:
            strace = None
        seen = []
        for name, argv, connects in runs:
            before = len(accepts)
            log = os.path.join(work, "trace")
            cmd = ["env", "-i"] + argv
            if strace:
                cmd = [strace, "-f", "-qq", "-e", "trace=%file,connect", "-o", log] + cmd
            try:
                subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
            except subprocess.TimeoutExpired:
                fail("%s with an empty environment did not end in 60 s" % name)
            if connects and len(accepts) == before:
                fail("%s with an empty environment did not reach the build's default socket %s"
                     % (name, sock))
            if strace:
                with open(log, "rb") as fh:
                    trace = fh.read()
                hits = [l for l in trace.splitlines() if NODE.search(l)]
                if hits:
                    fail("%s with an empty environment named a node path:\n  %s"
                         % (name, b"\n  ".join(hits[:5]).decode(errors="replace")))
                if b"/node-defaults/" in trace:
                    seen.append(name)
        print("hermetic: %d connections to %s, none elsewhere" % (len(accepts), sock))
        if not strace:
            print("hermetic: no strace that can run here: the system calls were not checked")
            sys.exit(77)
        print("hermetic: no system call named a node path; the build's defaults used by: "
              + ", ".join(seen))
        if len(seen) < len(runs):
            fail("not every command looked at the build's defaults (%d of %d)"
                 % (len(seen), len(runs)))
    finally:
        lis.close()
        os.unlink(sock)
        shutil.rmtree(work)


main()
