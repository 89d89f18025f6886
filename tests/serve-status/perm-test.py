#!/usr/bin/env python3
"""rtid serve status run by a user who may not connect to the daemon's socket
(EACCES): said on stderr as a permission problem, exit status 3 (not 1, which
says the daemon cannot be asked), and with --prometheus no rtid_up at all
(rtid_up 0 would fire an alert on a daemon that is up) but
rtid_scrape_error{reason="permission"} 1, also through --output. The same
command as the daemon's own user: rtid_up 1, rtid_scrape_error 0.

As root: a real daemon's socket is root's, mode 0660 (its default), in a
directory others may pass through; the command runs as nobody (setpriv).
As a user: the socket's directory is made unsearchable through its own fd
(root would pass it anyway). Exits 77, saying why, only when neither can be
arranged (no setpriv, no user nobody, or nobody cannot run this build).

    perm-test.py RTID_BIN"""
import os
import pwd
import shutil
import subprocess
import sys
import tempfile

RTID = sys.argv[1]


def skip(why):
    print("serve-status-permission: skipped: " + why)
    sys.exit(77)


def run(argv, rc):
    p = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert p.returncode == rc, (argv, p.returncode, p.stdout, p.stderr)
    return p


def as_nobody(argv):
    return ["setpriv", "--reuid=%d" % nobody.pw_uid, "--regid=%d" % nobody.pw_gid,
            "--clear-groups", "--inh-caps=-all", *argv]


root = os.geteuid() == 0
nobody = None
if root:
    if not shutil.which("setpriv"):
        skip("running as root without setpriv (util-linux) to become another user")
    try:
        nobody = pwd.getpwnam("nobody")
    except KeyError:
        skip("running as root and there is no user nobody to run the command as")
    p = subprocess.run(as_nobody([RTID, "--version"]), capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        skip("nobody cannot run %s (a directory above it closed to others?): %s"
             % (RTID, p.stderr.strip()))

with tempfile.TemporaryDirectory() as d:
    here = os.path.join(d, "run")
    os.mkdir(here, 0o700)
    sock = os.path.join(here, "rtid.sock")
    r, w = os.pipe()
    daemon = subprocess.Popen([RTID, "serve", "--socket", sock, "--libcuda",
                               os.path.join(d, "no-libcuda.so"), "--ready-fd", str(w)],
                              pass_fds=[w], stderr=subprocess.DEVNULL)
    os.close(w)
    fd = os.open(here, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        assert os.read(r, 16).startswith(b"ready"), "rtid serve did not start"
        os.close(r)
        # The owner's own scrape: up, no scrape error.
        ok = run([RTID, "serve", "status", "--socket", sock, "--prometheus"], 0).stdout.splitlines()
        assert "rtid_up 1" in ok and 'rtid_scrape_error{reason="permission"} 0' in ok, ok
        if root:
            # Others may pass through (not list) both directories; the
            # socket stays its 0660, root's.
            top = os.open(d, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
            os.fchmod(top, 0o711)
            os.close(top)
            os.fchmod(fd, 0o711)
            mode = os.stat(sock).st_mode & 0o777
            assert mode & 0o007 == 0 and os.stat(sock).st_gid != nobody.pw_gid, oct(mode)
            wrap = as_nobody
        else:
            os.fchmod(fd, 0o600)  # not searchable: connect fails with EACCES
            wrap = list
        out = os.path.join(d, "tf")
        os.mkdir(out, 0o700)
        ofd = os.open(out, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        os.fchmod(ofd, 0o777)  # nobody writes the file there
        os.close(ofd)
        p = run(wrap([RTID, "serve", "status", "--socket", sock]), 3)
        assert "Permission denied" in p.stderr and "may not connect" in p.stderr, p.stderr
        assert p.stdout == "", p.stdout
        p = run(wrap([RTID, "serve", "status", "--socket", sock, "--prometheus"]), 3)
        lines = p.stdout.splitlines()
        assert 'rtid_scrape_error{reason="permission"} 1' in lines, lines
        assert "# TYPE rtid_scrape_error gauge" in lines, lines
        assert not any(l.startswith(("rtid_up", "# TYPE rtid_up ", "# HELP rtid_up "))
                       for l in lines), lines
        assert "may not connect" in p.stderr, p.stderr
        run(wrap([RTID, "serve", "status", "--socket", sock, "--prometheus", "--output",
                  os.path.join(out, "rtid.prom")]), 3)
        with open(os.path.join(out, "rtid.prom")) as f:
            written = f.read().splitlines()
        assert 'rtid_scrape_error{reason="permission"} 1' in written, written
        assert not any(l.startswith(("rtid_up", "# TYPE rtid_up ")) for l in written), written
    finally:
        os.fchmod(fd, 0o700)
        os.close(fd)
        daemon.terminate()
        daemon.wait(60)
print("serve status without permission on the socket: said, exit 3, no rtid_up but "
      "rtid_scrape_error{reason=\"permission\"} 1 (as %s)" % ("nobody" if root else "this user"))
