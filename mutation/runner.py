"""Running one test as the mutation run needs it: alone, bounded in time,
and leaving nothing behind.

Each test runs in a session of its own (its process group is killed when it
ends or times out) with a token in its environment: a process that left the
group (a daemon that called setsid) still carries the token and is killed
too. Its TMPDIR is a directory of the run's own; a FUSE file system a killed
test left mounted under it is unmounted (fusermount3 -u, lazily), then the
directory is emptied.
"""

import os
import shutil
import signal
import subprocess
import time
import uuid


def _pids_with_token(token):
    needle = ("RTID_MUTATION_TOKEN=%s" % token).encode()
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open("/proc/%s/environ" % name, "rb") as f:
                env = f.read()
        except OSError:
            continue
        if needle in env.split(b"\0"):
            out.append(int(name))
    return out


def fuse_mounts_under(directory):
    """The mount points of FUSE file systems at or under directory."""
    directory = os.path.realpath(directory)
    out = []
    with open("/proc/self/mounts") as f:
        for line in f:
            fields = line.split()
            if len(fields) < 3 or not fields[2].startswith("fuse"):
                continue
            mnt = fields[1].replace("\\040", " ").replace("\\011", "\t").replace("\\134", "\\")
            if mnt == directory or mnt.startswith(directory + "/"):
                out.append(mnt)
    return out


def clean_up(pgid, token, tmpdir):
    """Kills the process group pgid and every process carrying token, then
    unmounts what is mounted under tmpdir and empties it. Returns what it
    found left over, for the log."""
    left = []
    if pgid > 0:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    for _ in range(50):
        pids = _pids_with_token(token)
        if not pids:
            break
        for pid in pids:
            left.append("process %d" % pid)
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.02)  # SIGKILL is asynchronous: look again until they are gone
    for mnt in sorted(fuse_mounts_under(tmpdir), key=len, reverse=True):
        left.append("mount %s" % mnt)
        if subprocess.call(["fusermount3", "-u", "-z", mnt], stderr=subprocess.DEVNULL) != 0:
            subprocess.call(["umount", "-l", mnt], stderr=subprocess.DEVNULL)
    if os.path.isdir(tmpdir):
        for name in os.listdir(tmpdir):
            p = os.path.join(tmpdir, name)
            if os.path.isdir(p) and not os.path.islink(p):
                shutil.rmtree(p, ignore_errors=True)
            else:
                try:
                    os.unlink(p)
                except OSError:
                    pass
    return sorted(set(left))


# The signals a run may have been started with ignored (nohup ignores
# SIGHUP, a shell's background job SIGINT and SIGQUIT), and a test inherits
# what is ignored: a mutant that sends one of them to the wrong process would
# then go unseen. Each test starts with their default actions, as under CI.
RESET_SIGNALS = (signal.SIGHUP, signal.SIGINT, signal.SIGQUIT, signal.SIGTERM,
                 signal.SIGUSR1, signal.SIGUSR2, signal.SIGALRM)


def _default_signals():
    for s in RESET_SIGNALS:
        signal.signal(s, signal.SIG_DFL)


def run_test(test, tmpdir, timeout, log_path, cwd=None):
    """Runs test (a meson introspection entry) with its own environment and
    TMPDIR=tmpdir, in its workdir or else cwd (meson runs tests in the build
    directory); returns (outcome, seconds, leftovers): outcome "pass",
    "skip" (exit 77), "fail" or "timeout". Its output goes to log_path."""
    os.makedirs(tmpdir, exist_ok=True)
    token = uuid.uuid4().hex
    env = dict(os.environ)
    env.update(test.get("env") or {})
    env["TMPDIR"] = tmpdir
    env["RTID_MUTATION_TOKEN"] = token
    start = time.monotonic()
    with open(log_path, "wb") as log:
        p = subprocess.Popen(test["cmd"], cwd=test.get("workdir") or cwd, env=env,
                             stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                             start_new_session=True, preexec_fn=_default_signals)
        try:
            rc = p.wait(timeout=timeout)
            outcome = "pass" if rc == 0 else "skip" if rc == 77 else "fail"
        except subprocess.TimeoutExpired:
            outcome = "timeout"
        finally:
            left = clean_up(p.pid, token, tmpdir)
            if p.returncode is None:
                p.wait()
    return outcome, time.monotonic() - start, left
